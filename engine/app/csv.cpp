#include "app/csv.h"

#include <filesystem>
#include <fstream>

#include "base/errors.h"

namespace geodl {

namespace fs = std::filesystem;

namespace {

std::string resolveFrom(const fs::path& base, const std::string& value) {
  if (value.empty()) return value;
  const fs::path p(value);
  return (p.is_absolute() ? p : base / p).lexically_normal().string();
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
  std::ifstream file(path);
  if (!file) throw IoError("cannot read the prep CSV '" + path + "'");
  const fs::path base = fs::absolute(fs::path(path)).parent_path();
  std::vector<SampleSource> sources;
  std::string line;
  for (int number = 1; std::getline(file, line); ++number) {
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
    sources.push_back(s);
  }
  if (sources.empty()) throw InputError("the prep CSV '" + path + "' has no line");
  return sources;
}

std::vector<std::string> readInferenceCsv(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw IoError("cannot read the inference CSV '" + path + "'");
  const fs::path base = fs::absolute(fs::path(path)).parent_path();
  std::vector<std::string> rasters;
  std::string line;
  while (std::getline(file, line)) {
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
