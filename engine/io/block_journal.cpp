#include "io/block_journal.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/atomic_file.h"
#include "base/errors.h"
#include "io/raster_tiles.h"

namespace geodl::io {

namespace fs = std::filesystem;

namespace {

constexpr const char* kDescription = "job.json";

std::string markerOf(const std::string& folder, int block) {
  char name[32];
  std::snprintf(name, sizeof name, "block-%06d.json", block);
  return (fs::path(folder) / name).string();
}

std::string carryOf(const std::string& folder, int block) {
  char name[32];
  std::snprintf(name, sizeof name, "block-%06d.carry", block);
  return (fs::path(folder) / name).string();
}

std::string partOf(const std::string& folder, int block, int windows) {
  char name[40];
  std::snprintf(name, sizeof name, "block-%06d.part-%06d", block, windows);
  return (fs::path(folder) / name).string();
}

std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return in ? text.str() : std::string();
}

// Removes what `keep` does not name from `folder` (a missing folder holds nothing).
void removeAllBut(const std::string& folder, const std::vector<std::string>& keep) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    if (std::find(keep.begin(), keep.end(), name) != keep.end()) continue;
    std::error_code ignored;
    fs::remove_all(entry.path(), ignored);
  }
}

// The sizes of block `block`'s files, as its mark records them: a file cut short or replaced
// since (a damaged disk, a copy) is told from them.
std::vector<int64_t> blockBytes(const JournalFolders& folders, int block) {
  std::vector<int64_t> bytes;
  for (const std::string& file : {folders.classBlock(block), folders.probabilityBlock(block)}) {
    if (file.empty()) continue;
    std::error_code ec;
    const auto size = fs::file_size(file, ec);
    bytes.push_back(ec ? -1 : int64_t(size));
  }
  return bytes;
}

// The blend's files (block-K.carry, block-K.part-W): a header of int32, then the sums (float,
// classes x plane), the weights (float, plane) and the valid flags (bytes, plane), for a plane
// of rows x columns. Whether `path` has the size of one with `head` bytes of header.
bool blendFileSized(const std::string& path, size_t head, uint64_t plane, int classes) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  return !ec && size == head + plane * (uint64_t(classes) * sizeof(float) + sizeof(float) + 1);
}

// The values after a blend file's header, `plane` pixels of `classes`; false when cut short.
bool readBlendValues(std::ifstream& in, size_t plane, int classes, std::vector<float>& sums,
                     std::vector<float>& weights, std::vector<uint8_t>& valid) {
  sums.resize(plane * size_t(classes));
  weights.resize(plane);
  valid.resize(plane);
  in.read(reinterpret_cast<char*>(sums.data()), std::streamsize(sums.size() * sizeof(float)));
  in.read(reinterpret_cast<char*>(weights.data()), std::streamsize(weights.size() * sizeof(float)));
  in.read(reinterpret_cast<char*>(valid.data()), std::streamsize(valid.size()));
  return bool(in);
}

// A blend file written whole, flushed to disk and renamed into place (throws IoError).
template <size_t N>
void writeBlendFile(const std::string& path, const std::array<int32_t, N>& head, const std::vector<float>& sums,
                    const std::vector<float>& weights, const std::vector<uint8_t>& valid) {
  writeFileAtomically(path, [&](const std::string& temporary) {
    FileSink sink(temporary, "what the run keeps for its resume");
    sink.write(head.data(), sizeof head);
    sink.write(sums.data(), sums.size() * sizeof(float));
    sink.write(weights.data(), weights.size() * sizeof(float));
    sink.write(valid.data(), valid.size());
    sink.close();
  });
}

// A carry file (block-K.carry): its header {y, rows, width, classes}, then the values of rows x
// width. The header of `in`, when the file's size is the one it gives.
std::optional<std::array<int32_t, 4>> carryHead(std::ifstream& in, const std::string& path) {
  std::array<int32_t, 4> head{};
  in.read(reinterpret_cast<char*>(head.data()), sizeof head);
  if (!in || head[1] < 0 || head[2] < 0 || head[3] < 0) return std::nullopt;
  if (!blendFileSized(path, sizeof head, uint64_t(head[1]) * uint64_t(head[2]), head[3])) return std::nullopt;
  return head;
}

// Whether the carry file `path` is whole.
bool wholeCarry(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return carryHead(in, path).has_value();
}

// A part file (block-K.part-W): its header {block, windows, y, rows, width, classes, x0,
// final_x, x1}, then the values of rows x (x1 - x0). Its header, when the file's size is the
// one it gives and it is the part its name says.
using PartHead = std::array<int32_t, 9>;
std::optional<BlockPart> partHead(std::ifstream& in, const std::string& path, int block, int windows) {
  PartHead h{};
  in.read(reinterpret_cast<char*>(h.data()), sizeof h);
  if (!in || h[0] != block || h[1] != windows) return std::nullopt;
  BlockPart p;
  p.block = h[0], p.windows = h[1], p.y = h[2], p.rows = h[3], p.width = h[4], p.classes = h[5];
  p.x0 = h[6], p.final_x = h[7], p.x1 = h[8];
  if (p.rows < 0 || p.classes < 0 || p.x0 < 0 || p.x1 < p.x0 || p.x1 > p.width || p.final_x < p.x0 ||
      p.final_x > p.x1 || !blendFileSized(path, sizeof h, uint64_t(p.rows) * uint64_t(p.x1 - p.x0), p.classes))
    return std::nullopt;
  return p;
}

// The parts of `block` whose windows are `windows` (its files, in order) that are whole: their
// values too when asked.
std::vector<BlockPart> readPartFiles(const std::string& folder, int block, const std::vector<int>& windows,
                                     bool values) {
  std::vector<BlockPart> parts;
  for (int w : windows) {
    const std::string path = partOf(folder, block, w);
    std::ifstream in(path, std::ios::binary);
    auto p = partHead(in, path, block, w);
    if (!p) continue;  // cut short: the parts after it do not chain
    if (values && !readBlendValues(in, size_t(p->rows) * size_t(p->x1 - p->x0), p->classes, p->sums, p->weights,
                                   p->valid))
      continue;
    parts.push_back(std::move(*p));
  }
  return parts;
}

// The windows of each part file of `folder`, by block.
std::map<int, std::vector<int>> partFiles(const std::string& folder) {
  static const std::regex part(R"(block-([0-9]+)\.part-([0-9]+))");
  std::map<int, std::vector<int>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    std::smatch m;
    const std::string name = entry.path().filename().string();
    if (std::regex_match(name, m, part)) found[std::stoi(m[1].str())].push_back(std::stoi(m[2].str()));
  }
  for (auto& [block, windows] : found) std::sort(windows.begin(), windows.end());
  return found;
}

}  // namespace

std::string journalFolderOf(const std::string& output) { return partialPathFor(output); }

std::string blockFileName(int block) {
  char name[32];
  std::snprintf(name, sizeof name, "block-%06d.tif", block);
  return name;
}

GeoTiffSpec rowsSpec(GeoTiffSpec spec, int y0, int rows) {
  auto& gt = spec.geotransform;
  gt[0] += y0 * gt[2];
  gt[3] += y0 * gt[5];
  spec.height = rows;
  spec.cog = false;
  return spec;
}

std::string JournalFolders::classBlock(int block) const { return (fs::path(classes) / blockFileName(block)).string(); }

std::string JournalFolders::probabilityBlock(int block) const {
  return probabilities.empty() ? "" : (fs::path(probabilities) / blockFileName(block)).string();
}

std::string journalDescription(const JournalFolders& folders) {
  return readText((fs::path(folders.classes) / kDescription).string());
}

std::vector<JournalBlock> finishedBlocks(const JournalFolders& folders, std::vector<int>* altered,
                                         std::vector<StartedBlock>* started) {
  static const std::regex marker(R"(block-([0-9]+)\.json)");
  std::map<int, JournalBlock> done;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folders.classes, ec)) {
    std::smatch m;
    const std::string name = entry.path().filename().string();
    if (!std::regex_match(name, m, marker)) continue;
    const int block = std::stoi(m[1].str());
    std::error_code missing;
    if (!fs::is_regular_file(folders.classBlock(block), missing)) continue;
    if (!folders.probabilities.empty() && !fs::is_regular_file(folders.probabilityBlock(block), missing)) continue;
    try {
      const auto j = nlohmann::json::parse(readText(entry.path().string()));
      JournalBlock b{block, j.at("y0").get<int>(), j.at("rows").get<int>(), std::vector<int64_t>(256, 0)};
      for (const auto& [id, n] : j.at("id_pixels").items()) b.id_pixels.at(size_t(std::stoi(id))) = n.get<int64_t>();
      if (j.at("block").get<int>() != block) continue;
      if (j.at("bytes").get<std::vector<int64_t>>() != blockBytes(folders, block)) {
        if (altered) altered->push_back(block);
        continue;
      }
      done[block] = std::move(b);
    } catch (const std::exception&) {  // a marker cut short is no marker: the block is computed again
    }
  }
  std::vector<std::string> keep = {kDescription}, keep_probabilities;
  std::vector<JournalBlock> blocks;
  for (auto& [block, b] : done) {
    const std::string file = blockFileName(block);
    b.carry = wholeCarry(carryOf(folders.classes, block));  // cut short: the windows above are computed
    keep.insert(keep.end(), {fs::path(markerOf("", block)).filename().string(), file, file + ".aux.xml"});
    if (b.carry) keep.push_back(fs::path(carryOf("", block)).filename().string());
    keep_probabilities.insert(keep_probabilities.end(), {file, file + ".aux.xml"});
    blocks.push_back(std::move(b));
  }
  if (altered) std::sort(altered->begin(), altered->end());
  if (started) {
    started->clear();
    for (const auto& [block, windows] : partFiles(folders.classes)) {
      if (done.count(block) || (block > 0 && !done.count(block - 1))) continue;
      const std::vector<BlockPart> parts = readPartFiles(folders.classes, block, windows, false);
      const size_t chain = chainedParts(parts);
      if (chain == 0) continue;
      for (size_t i = 0; i < chain; ++i)
        keep.push_back(fs::path(partOf("", block, parts[i].windows)).filename().string());
      started->push_back({block, parts[chain - 1].windows});
    }
  }
  removeAllBut(folders.classes, keep);
  if (!folders.probabilities.empty()) removeAllBut(folders.probabilities, keep_probabilities);
  return blocks;
}

void forgetBlock(const JournalFolders& folders, int block) {
  for (const std::string& file : {markerOf(folders.classes, block), carryOf(folders.classes, block),
                                  folders.classBlock(block), folders.classBlock(block) + ".aux.xml",
                                  folders.probabilityBlock(block)}) {
    std::error_code ignored;
    if (!file.empty()) fs::remove(file, ignored);
  }
}

void startJournal(const JournalFolders& folders, const std::string& description) {
  try {
    for (const std::string& folder : {folders.classes, folders.probabilities}) {
      if (folder.empty()) continue;
      std::error_code ec;
      fs::create_directory(folder, ec);
      if (ec || !fs::is_directory(folder))
        throw writeFailure("the finished blocks of the run ('" + folder + "')", folder, ec.value(), ec.message());
    }
    writeTextAtomically((fs::path(folders.classes) / kDescription).string(), description);
  } catch (...) {  // a full disk: nothing of the journal stays
    removeJournal(folders);
    throw;
  }
}

void removeJournal(const JournalFolders& folders) {
  for (const std::string& folder : {folders.classes, folders.probabilities}) {
    std::error_code ignored;
    if (!folder.empty()) fs::remove_all(folder, ignored);
  }
}

int64_t markedBlocks(const JournalFolders& folders) {
  static const std::regex marker(R"(block-[0-9]+\.json)");
  std::error_code ec;
  int64_t n = 0;
  for (const auto& entry : fs::directory_iterator(folders.classes, ec))
    if (std::regex_match(entry.path().filename().string(), marker)) ++n;
  return n;
}

void dropJournalMarkers(const JournalFolders& folders) {
  static const std::regex marker(R"(block-[0-9]+\.(json|carry|part-[0-9]+)|job\.json)");
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folders.classes, ec)) {
    std::error_code ignored;
    if (std::regex_match(entry.path().filename().string(), marker)) fs::remove(entry.path(), ignored);
  }
}

BlendCarry readCarry(const JournalFolders& folders, int block) {
  const std::string path = carryOf(folders.classes, block);
  std::ifstream in(path, std::ios::binary);
  BlendCarry c;
  const auto head = carryHead(in, path);
  if (head) {
    c.y = (*head)[0];
    c.rows = (*head)[1];
    c.width = (*head)[2];
    c.classes = (*head)[3];
  }
  if (!head || !readBlendValues(in, size_t(c.rows) * size_t(c.width), c.classes, c.sums, c.weights, c.valid))
    throw IoError("cannot read '" + path + "', what a stopped run kept for its resume, whole: run without resume to "
                  "start again");
  return c;
}

std::vector<BlockPart> readParts(const JournalFolders& folders, int block, bool values) {
  const auto files = partFiles(folders.classes);
  const auto of = files.find(block);
  return of == files.end() ? std::vector<BlockPart>{} : readPartFiles(folders.classes, block, of->second, values);
}

void JournalSink::part(const BlockPart& state) {
  const auto start = std::chrono::steady_clock::now();
  const std::string path = partOf(folders_.classes, state.block, state.windows);
  writeBlendFile(path,
                 PartHead{state.block, state.windows, state.y, state.rows, state.width, state.classes, state.x0,
                          state.final_x, state.x1},
                 state.sums, state.weights, state.valid);
  parts_.push_back(path);
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void JournalSink::adoptParts(const std::vector<BlockPart>& parts) {
  for (const BlockPart& p : parts) parts_.push_back(partOf(folders_.classes, p.block, p.windows));
}

void JournalSink::carry(int block, const BlendCarry& state) {
  const auto start = std::chrono::steady_clock::now();
  writeBlendFile(carryOf(folders_.classes, block), std::array<int32_t, 4>{state.y, state.rows, state.width, state.classes},
                 state.sums, state.weights, state.valid);
  carry_written_ = block;
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

JournalSink::JournalSink(JournalFolders folders, const GeoTiffSpec& classes, const GeoTiffSpec& probabilities,
                         std::vector<int> ys, std::function<void(int)> done)
    : folders_(std::move(folders)), classes_(classes), probabilities_(probabilities), ys_(std::move(ys)),
      done_(std::move(done)),
      type_(folders_.probabilities.empty() ? ProbabilityType::None
            : probabilities.float32        ? ProbabilityType::Float32
                                           : ProbabilityType::Byte) {}

void JournalSink::writeRows(int y, int n, const uint8_t* ids, const void* probabilities) {
  const auto at = std::lower_bound(ys_.begin(), ys_.end(), y);
  if (at == ys_.end() || *at != y) throw IoError("rows from " + std::to_string(y) + " do not start a block");
  const int block = int(at - ys_.begin());
  const auto start = std::chrono::steady_clock::now();
  GeoTiffTileSink files(folders_.classBlock(block), rowsSpec(classes_, y, n), folders_.probabilityBlock(block),
                        rowsSpec(probabilities_, y, n));
  files.writeRows(0, n, ids, probabilities);
  files.finish();
  files.commit();
  std::vector<int64_t> counts(256, 0);
  for (size_t i = 0, end = size_t(n) * size_t(classes_.width); i < end; ++i) ++counts[ids[i]];
  nlohmann::json id_pixels = nlohmann::json::object();
  for (size_t id = 0; id < counts.size(); ++id)
    if (counts[id]) id_pixels[std::to_string(id)] = counts[id];
  writeTextAtomically(markerOf(folders_.classes, block),
                      nlohmann::json{{"block", block}, {"y0", y}, {"rows", n}, {"id_pixels", id_pixels},
                                     {"bytes", blockBytes(folders_, block)}}
                          .dump());
  for (const std::string& part : parts_) {  // marked: its parts are no longer needed
    std::error_code ignored;
    fs::remove(part, ignored);
  }
  parts_.clear();
  if (carry_written_ == block) {  // marked with its carry: the one before is no longer needed
    if (carry_kept_ >= 0) {
      std::error_code ignored;
      fs::remove(carryOf(folders_.classes, carry_kept_), ignored);
    }
    carry_kept_ = block;
  }
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (done_) done_(block);
}

}  // namespace geodl::io
