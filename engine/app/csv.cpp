#include "app/csv.h"

#include <filesystem>
#include <fstream>

#include "base/errors.h"
#include "base/file_kind.h"

namespace geodl {

namespace fs = std::filesystem;

namespace {

std::string resolveFrom(const fs::path& base, const std::string& value) {
  if (value.empty()) return value;
  const fs::path p(value);
  return (p.is_absolute() ? p : base / p).lexically_normal().string();
}

// A CSV saved by a spreadsheet on Windows starts with UTF-8's byte order mark, which would
// stay in the first path.
void dropByteOrderMark(std::string& line) {
  if (line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
}

}  // namespace

std::vector<std::string> splitCsvLine(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(field);
      field.clear();
    } else if (c != '\r') {
      field += c;
    }
  }
  fields.push_back(field);
  for (auto& f : fields) {
    const auto b = f.find_first_not_of(" \t"), e = f.find_last_not_of(" \t");
    f = b == std::string::npos ? "" : f.substr(b, e - b + 1);
  }
  return fields;
}

std::vector<SampleSource> readPrepCsv(const std::string& path) {
  checkReadableFile(path, "the prep CSV");
  std::ifstream file(path);
  if (!file) throw IoError("cannot read the prep CSV '" + path + "'");
  const fs::path base = fs::absolute(fs::path(path)).parent_path();
  std::vector<SampleSource> sources;
  std::vector<int> numbers;  // each source's line
  std::string line;
  for (int number = 1; std::getline(file, line); ++number) {
    if (number == 1) dropByteOrderMark(line);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto fields = splitCsvLine(line);
    if (fields.size() != 4)
      throw InputError("line " + std::to_string(number) + " of '" + path + "' has " +
                       std::to_string(fields.size()) +
                       " columns; each line needs 4: image, vector, attribute, dataset "
                       "(trn, val or tst)");
    SampleSource s;
    s.raster = resolveFrom(base, fields[0]);
    s.vector = resolveFrom(base, fields[1]);
    s.field = fields[2];
    s.split = fields[3];
    if (s.split != "trn" && s.split != "val" && s.split != "tst")
      throw InputError("line " + std::to_string(number) + " of '" + path + "': dataset '" +
                       s.split + "' is not trn, val or tst");
    for (size_t i = 0; i < sources.size(); ++i)
      if (sources[i].raster == s.raster && sources[i].vector == s.vector && sources[i].field == s.field &&
          sources[i].split == s.split)
        throw InputError("line " + std::to_string(number) + " of '" + path + "' repeats line " +
                         std::to_string(numbers[i]) +
                         " (the same image, vector, attribute and dataset): its samples would be taken twice; "
                         "remove one of them");
    sources.push_back(s);
    numbers.push_back(number);
  }
  if (sources.empty()) throw InputError("the prep CSV '" + path + "' has no line");
  return sources;
}

std::vector<std::string> readInferenceCsv(const std::string& path) {
  checkReadableFile(path, "the inference CSV");
  std::ifstream file(path);
  if (!file) throw IoError("cannot read the inference CSV '" + path + "'");
  const fs::path base = fs::absolute(fs::path(path)).parent_path();
  std::vector<std::string> rasters;
  std::string line;
  for (int number = 1; std::getline(file, line); ++number) {
    if (number == 1) dropByteOrderMark(line);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto fields = splitCsvLine(line);
    if (!fields[0].empty()) rasters.push_back(resolveFrom(base, fields[0]));
  }
  if (rasters.empty())
    throw InputError("the inference CSV '" + path + "' names no raster; put one raster path per "
                     "line");
  return rasters;
}

}  // namespace geodl
