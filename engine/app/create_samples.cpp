#include "app/create_samples.h"
#include "app/create_samples_stages.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <chrono>
#include <cstdio>
#include <regex>

#include <nlohmann/json.hpp>

#include "app/data_folder.h"
#include "app/data_parallel.h"
#include "app/job_outputs.h"
#include "base/atomic_file.h"
#include "base/errors.h"
#include "base/file_identity.h"
#include "base/file_kind.h"
#include "base/hard_stop.h"
#include "base/metadata.h"
#include "io/band_statistics.h"
#include "io/footprints.h"
#include "io/labels.h"
#include "io/raster.h"
#include "io/sample_store.h"
#include "io/validation_area.h"

namespace geodl {

namespace {

// Applies the masks to a window's pixels; returns whether the window is kept.
bool prepareWindow(const SampleOptions& options, int bands, std::vector<double>& image,
                   const std::vector<uint8_t>& valid, std::vector<uint8_t>& label) {
  int64_t annotated = 0;
  for (size_t p = 0; p < label.size(); ++p) {
    bool ignored = !valid[p];
    if (options.mask_reference && !ignored) {
      bool zero = true;
      for (int b = 0; b < bands && zero; ++b) zero = image[p * bands + b] == 0.0;
      ignored = zero;
    }
    if (ignored || (options.unlabelled_ignored && label[p] == 0)) label[p] = uint8_t(options.ignore_index);
    if (options.mask_input_image && label[p] == 0)
      for (int b = 0; b < bands; ++b) image[p * bands + b] = 0.0;
    if (label[p] != 0 && label[p] != options.ignore_index) ++annotated;
  }
  if (options.remove_background && annotated == 0) return false;
  return double(annotated) / double(label.size()) >= options.min_annotated_percent / 100.0;
}

// The stores (one per split asked for), the footprints, and what they count as samples come.
class SampleOutputs {
 public:
  SampleOutputs(const SampleOptions& options, const Rasters& rasters, const std::string& data_type,
                SampleResult& result)
      : options_(options), rasters_(rasters), result_(result),
        stats_(rasters.front()->info().bands), num_classes_(int(result.class_ids.size())) {
    // Splits that will be written: those the sources or the split mode ask for.
    std::set<std::string> wanted = {"trn", "val"};
    if (options.split_mode == SplitMode::FromSources) {
      wanted.clear();
      for (const auto& s : options.sources) wanted.insert(s.split);
    }
    for (const auto& split : kSplits) {
      if (!wanted.count(split)) continue;
      stores_[split] = std::make_unique<io::SampleStoreWriter>(storePath(options, split), options.sample_size,
                                                               rasters.front()->info().bands, data_type);
      pixel_counts_[split].assign(size_t(num_classes_), 0);
    }
    result.footprint_path = footprintPath(options);
    footprints_ = std::make_unique<io::FootprintWriter>(result.footprint_path, rasters.front()->info().crs_wkt,
                                                        result.class_ids);
  }

  void add(const Window& w, const std::vector<double>& image, const std::vector<uint8_t>& valid,
           const std::vector<uint8_t>& label) {
    const int S = options_.sample_size;
    std::vector<int64_t> counts(size_t(num_classes_), 0);
    for (uint8_t v : label)
      if (v < num_classes_) ++counts[v];
    auto& totals = pixel_counts_[w.split];
    for (int c = 0; c < num_classes_; ++c) totals[c] += counts[c];
    if (w.split == "trn") {
      const size_t bands = size_t(rasters_.front()->info().bands);
      for (size_t p = 0; p < valid.size(); ++p)
        if (valid[p]) stats_.add(image.data() + p * bands);
    }
    const auto& g = rasters_[w.source]->info().geotransform;
    const std::array<double, 6> sample_gt = {g[0] + w.x * g[1] + w.y * g[2], g[1], g[2],
                                             g[3] + w.x * g[4] + w.y * g[5], g[4], g[5]};
    const std::array<int, 4> window = {w.x, w.y, S, S};
    auto& store = *stores_.at(w.split);
    footprints_->add(w.split, store.size(), options_.sources[w.source].raster, window, sample_gt, counts);
    store.append(image, label, window, sample_gt, int(w.source));
  }

  // Refuses an empty split, then completes the stores and the footprints, and only when all
  // are complete moves them into place: a failure (a full disk) leaves the previous ones.
  void commit(const std::string& data_type) {
    for (const auto& [split, store] : stores_)
      if (store->size() == 0)
        throw InputError("no sample for the '" + split + "' split: every window was left out "
                         "(lower min_annotated_percent, turn off remove_background, or check that "
                         "the ground truth covers the rasters of that split)");
    result_.band_mean = stats_.mean();
    result_.band_std = stats_.stddev();
    io::StoreMetadata meta;
    meta.engine_version = metadata::kVersion;
    meta.sample_size = options_.sample_size;
    meta.bands = rasters_.front()->info().bands;
    meta.data_type = data_type;
    meta.num_classes = num_classes_;
    meta.ignore_index = options_.ignore_index;
    meta.class_ids = result_.class_ids;
    meta.class_names = result_.class_names;
    meta.band_mean = result_.band_mean;
    meta.band_std = result_.band_std;
    meta.band_min = stats_.minimum();
    meta.band_max = stats_.maximum();
    for (const auto& r : rasters_) {
      meta.sources.push_back(r->info().path);
      meta.source_crs_wkt.push_back(r->info().crs_wkt);
    }
    meta.crs_wkt = rasters_.front()->info().crs_wkt;
    meta.wavelengths = commonWavelengths();
    for (auto& [split, store] : stores_) {
      meta.split = split;
      meta.class_pixel_counts = pixel_counts_[split];
      store->finish(meta);
      result_.splits.push_back({split, store->path(), store->size(), pixel_counts_[split]});
    }
    footprints_->finish();
    const hard_stop::CommitScope moving;  // all the outputs or none
    for (auto& [split, store] : stores_) store->commit();
    footprints_->commit();
  }

 private:
  // The bands' wavelengths where every raster's metadata gives the same (within 0.005
  // micrometres); none where one has none, or where they differ (the log says so).
  std::vector<double> commonWavelengths() const {
    const auto& first = rasters_.front()->info();
    for (const auto& r : rasters_) {
      const auto& w = r->info().wavelengths;
      if (w.empty()) return {};
      for (size_t b = 0; b < w.size(); ++b)
        if (std::abs(w[b] - first.wavelengths[b]) > 0.005) {
          result_.warnings.push_back("the bands of '" + r->info().path + "' have other wavelengths than those of '" +
                                     first.path + "' (band " + std::to_string(b + 1) +
                                     "): no wavelengths recorded in the stores; give them to training "
                                     "(wavelengths) if the model needs them");
          return {};
        }
    }
    return first.wavelengths;
  }

  const SampleOptions& options_;
  const Rasters& rasters_;
  SampleResult& result_;
  io::BandStatistics stats_;
  int num_classes_;
  std::map<std::string, std::unique_ptr<io::SampleStoreWriter>> stores_;
  std::map<std::string, std::vector<int64_t>> pixel_counts_;
  std::unique_ptr<io::FootprintWriter> footprints_;
};

// No store or footprint layer may replace a raster or vector the job reads, or a file of
// another kind; existing ones are replaced, and the log says so. With `locks` (the writing
// rank), the outputs are locked for the job.
void checkFiles(const SampleOptions& options, Progress& progress, OutputLocks* locks) {
  std::vector<JobOutput> outputs;
  // The stores' names come from the data folder, and the footprints' unless given.
  for (const auto& split : kSplits)
    outputs.push_back({"the " + split + " store", storePath(options, split), FileKind::Hdf5, true, options.run.overwrite,
                       writtenByGeoDLCheck(FileKind::Hdf5)});
  outputs.push_back({"the footprint layer", footprintPath(options), FileKind::GeoPackage, options.footprint_path.empty(),
                     options.run.overwrite, writtenByGeoDLCheck(FileKind::GeoPackage)});
  std::vector<JobFile> inputs;
  for (const auto& s : options.sources) {
    inputs.push_back({"the raster", s.raster});
    inputs.push_back({"the ground truth", s.vector});
  }
  inputs.push_back({"the validation polygons", options.validation_vector});
  for (const auto& line : checkJobFiles(outputs, inputs, locks))
    if (locks) progress.log(line);
}

// The journal of a samples job (samples' resume), in a folder beside the stores
// (".samples.partial"): every rank writes the windows it has read, about every second, as a
// segment: the records of the windows it kept, in window order (the window's index, its pixels
// (float where the stores' type fits in one exactly, else double), valid mask and labels),
// then which windows it read and their NaN counts, written under a temporary name, flushed and
// renamed when complete. Rank 0 merges every segment in window order into the stores (the
// samples, their order and every statistic one process gives), then removes the journal; a
// stopped job keeps it, and a resumed one reads only the windows no segment has.
//   .samples.partial/job.json                  what the job is (a resume must be the same)
//   .samples.partial/seg-RUN-RANK-SEQ          a segment: the SEQ-th of rank RANK in run RUN
constexpr uint64_t kSegmentMagic = 0x31475345444f4547ull;  // "GEODESG1"

// How a record holds a window's values: the narrowest type that holds every value of the
// stores' type exactly (Byte: bytes; the other types of 16 bits or less and Float32: float;
// the rest: double).
enum class RecordValues { Byte, Float, Double };
RecordValues recordValues(const std::string& data_type) {
  if (data_type == "Byte") return RecordValues::Byte;
  if (data_type == "Int8" || data_type == "UInt16" || data_type == "Int16" || data_type == "Float32")
    return RecordValues::Float;
  return RecordValues::Double;
}

std::string segmentName(int run, int rank, int seq) {
  char name[48];
  std::snprintf(name, sizeof name, "seg-%04d-%05d-%06d", run, rank, seq);
  return name;
}

// The windows a rank reads, written as segments into the journal.
class SegmentWriter {
 public:
  SegmentWriter(std::string folder, int run, int rank, const std::string& data_type, size_t rasters)
      : folder_(std::move(folder)), run_(run), rank_(rank), values_(recordValues(data_type)),
        non_finite_(rasters, 0) {}

  // Window `index` read (`kept`: with its record); the segment is written once a second.
  void add(uint64_t index, bool kept, const std::vector<double>& image, const std::vector<uint8_t>& valid,
           const std::vector<uint8_t>& label) {
    if (considered_.empty()) started_ = std::chrono::steady_clock::now();
    considered_.push_back(index);
    if (!kept) return;
    append(&index, sizeof index);
    if (values_ == RecordValues::Double) {
      append(image.data(), image.size() * sizeof(double));
    } else if (values_ == RecordValues::Float) {
      narrow_.assign(image.begin(), image.end());
      append(narrow_.data(), narrow_.size() * sizeof(float));
    } else {
      bytes8_.assign(image.begin(), image.end());
      append(bytes8_.data(), bytes8_.size());
    }
    append(valid.data(), valid.size());
    append(label.data(), label.size());
    ++records_;
  }
  // Writes the segment when a second has passed since its first window (or `now`); `non_finite`:
  // the readers' counts of NaN pixels so far.
  void flush(const std::vector<int64_t>& non_finite, bool now = false) {
    if (considered_.empty() ||
        (!now && std::chrono::steady_clock::now() - started_ < std::chrono::seconds(1) && bytes_.size() < (64u << 20)))
      return;
    for (uint64_t k : considered_) append(&k, sizeof k);
    for (size_t r = 0; r < non_finite_.size(); ++r) {
      const int64_t delta = non_finite[r] - non_finite_[r];
      append(&delta, sizeof delta);
    }
    non_finite_ = non_finite;
    const uint64_t n = considered_.size();
    append(&n, sizeof n);
    append(&records_, sizeof records_);
    append(&kSegmentMagic, sizeof kSegmentMagic);
    writeFileAtomically((std::filesystem::path(folder_) / segmentName(run_, rank_, seq_++)).string(),
                        [&](const std::string& temp) {
                          FileSink sink(temp, "the samples' journal");
                          sink.write(bytes_.data(), bytes_.size());
                          sink.close();
                        });
    bytes_.clear();
    considered_.clear();
    records_ = 0;
  }

 private:
  void append(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    bytes_.insert(bytes_.end(), p, p + n);
  }
  std::string folder_;
  int run_, rank_, seq_ = 0;
  RecordValues values_;
  std::vector<int64_t> non_finite_;
  std::vector<uint64_t> considered_;
  uint64_t records_ = 0;
  std::vector<uint8_t> bytes_;
  std::vector<float> narrow_;
  std::vector<uint8_t> bytes8_;
  std::chrono::steady_clock::time_point started_;
};

// A segment's trailer: the windows it read, their NaN counts, how many records it holds.
struct SegmentTrailer {
  std::vector<uint64_t> considered;
  std::vector<int64_t> non_finite;
  uint64_t records = 0;
  uint64_t records_bytes = 0;
};

// Reads a segment's trailer; nullopt for a segment cut short or not GeoDL's.
std::optional<SegmentTrailer> readTrailer(const std::string& path, size_t rasters) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return std::nullopt;
  const auto size = uint64_t(in.tellg());
  uint64_t tail[3];
  if (size < sizeof tail) return std::nullopt;
  in.seekg(std::streamoff(size - sizeof tail));
  if (!in.read(reinterpret_cast<char*>(tail), sizeof tail) || tail[2] != kSegmentMagic) return std::nullopt;
  SegmentTrailer t;
  const uint64_t n = tail[0];
  t.records = tail[1];
  const uint64_t trailer = sizeof tail + n * 8 + rasters * 8;
  if (trailer > size) return std::nullopt;
  t.records_bytes = size - trailer;
  t.considered.resize(n);
  t.non_finite.resize(rasters);
  in.seekg(std::streamoff(t.records_bytes));
  in.read(reinterpret_cast<char*>(t.considered.data()), std::streamsize(n * 8));
  in.read(reinterpret_cast<char*>(t.non_finite.data()), std::streamsize(rasters * 8));
  if (!in) return std::nullopt;
  return t;
}

// The records of one writer's segments in order (a run's rank: its windows increase), read
// one at a time.
class StreamReader {
 public:
  StreamReader(std::vector<std::pair<std::string, uint64_t>> segments, int sample_size, int bands,
               const std::string& data_type)
      : segments_(std::move(segments)), pixels_(size_t(sample_size) * sample_size),
        values_(pixels_ * size_t(bands)), kind_(recordValues(data_type)) {
    next();
  }
  bool done() const { return done_; }
  uint64_t index() const { return index_; }
  std::vector<double> image;
  std::vector<uint8_t> valid, label;
  void next() {
    while (left_ == 0) {
      if (at_ >= segments_.size()) {
        done_ = true;
        return;
      }
      path_ = segments_[at_].first;
      left_ = segments_[at_++].second;
      in_ = std::ifstream(path_, std::ios::binary);
      if (!in_) throw IoError("cannot read '" + path_ + "', a segment of the samples' journal: was it removed? start "
                              "the job again without resume");
    }
    --left_;
    in_.read(reinterpret_cast<char*>(&index_), sizeof index_);
    image.resize(values_);
    if (kind_ == RecordValues::Double) {
      in_.read(reinterpret_cast<char*>(image.data()), std::streamsize(values_ * sizeof(double)));
    } else if (kind_ == RecordValues::Float) {
      narrow_.resize(values_);
      in_.read(reinterpret_cast<char*>(narrow_.data()), std::streamsize(values_ * sizeof(float)));
      std::copy(narrow_.begin(), narrow_.end(), image.begin());
    } else {
      bytes8_.resize(values_);
      in_.read(reinterpret_cast<char*>(bytes8_.data()), std::streamsize(values_));
      std::copy(bytes8_.begin(), bytes8_.end(), image.begin());
    }
    valid.resize(pixels_);
    label.resize(pixels_);
    in_.read(reinterpret_cast<char*>(valid.data()), std::streamsize(pixels_));
    if (!in_.read(reinterpret_cast<char*>(label.data()), std::streamsize(pixels_)))
      throw IoError("'" + path_ + "', a segment of the samples' journal, ends in the middle of a sample: start the "
                    "job again without resume");
  }

 private:
  std::vector<std::pair<std::string, uint64_t>> segments_;  // path, records
  size_t at_ = 0;
  uint64_t left_ = 0;
  std::string path_;
  std::ifstream in_;
  size_t pixels_, values_;
  RecordValues kind_;
  std::vector<float> narrow_;
  std::vector<uint8_t> bytes8_;
  uint64_t index_ = 0;
  bool done_ = false;
};

// The journal's segments, complete ones only (a segment being written when the job stopped
// is removed), grouped by writer.
struct JournalContents {
  std::map<std::pair<int, int>, std::vector<std::pair<int, std::string>>> streams;  // (run, rank) -> (seq, path)
  std::map<std::string, SegmentTrailer> trailers;
  int runs = 0;
};

JournalContents readJournal(const std::string& folder, size_t rasters, bool remove_others) {
  static const std::regex name(R"(seg-([0-9]+)-([0-9]+)-([0-9]+))");
  JournalContents j;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    const std::string file = entry.path().filename().string();
    std::smatch m;
    std::optional<SegmentTrailer> t;
    if (std::regex_match(file, m, name)) t = readTrailer(entry.path().string(), rasters);
    if (!t) {
      if (remove_others && file != "job.json") std::filesystem::remove_all(entry.path(), ec);
      continue;
    }
    const int run = std::stoi(m[1].str());
    j.runs = std::max(j.runs, run + 1);
    j.streams[{run, std::stoi(m[2].str())}].push_back({std::stoi(m[3].str()), entry.path().string()});
    j.trailers[entry.path().string()] = *t;
  }
  for (auto& [writer, segments] : j.streams) std::sort(segments.begin(), segments.end());
  return j;
}

// How a message names a samples option: "the option stride (sample.samples_dist, --samples-dist)".
std::string sampleOptionNamed(const std::string& name) {
  for (const auto& option : sampleOptionTable())
    if (option.name == name) return optionOrigin(option);
  return name;
}

// What a resumed samples job must share with the stopped one: the files it reads and every
// option that changes a sample.
nlohmann::json resumeDescription(const SampleOptions& o, size_t windows) {
  nlohmann::json sources = nlohmann::json::array();
  for (const auto& s : o.sources)
    sources.push_back({{"raster", fileRecord(s.raster)}, {"vector", fileRecord(s.vector)}, {"layer", s.layer},
                       {"field", s.field}, {"split", s.split}});
  return {{"geodl", metadata::kVersion},
          {"sources", sources},
          {"validation_vector", fileRecord(o.validation_vector)},
          {"options",
           {{"sample_size", o.sample_size},
            {"stride", o.stride},
            {"num_classes", o.num_classes},
            {"bands", o.bands},
            {"min_annotated_percent", o.min_annotated_percent},
            {"remove_background", o.remove_background},
            {"mask_input_image", o.mask_input_image},
            {"mask_reference", o.mask_reference},
            {"ignored_values", o.ignored_values},
            {"ignore_index", o.ignore_index},
            {"unlabelled_ignored", o.unlabelled_ignored},
            {"split", int(o.split_mode)},
            {"validation_percent", o.validation_percent},
            {"validation_layer", o.validation_layer},
            {"seed", o.seed},
            {"footprint_path", o.footprint_path},
            {"rank", o.rank},
            {"world_size", o.world_size}}},
          {"windows", windows}};
}

// Rank 0 (or a manual shard), before any window: the journal resumed (refused, naming what
// differs, when it is not the stopped job), or a stopped job's discarded and a new one started.
void openSampleJournal(const SampleOptions& o, const std::string& folder, const nlohmann::json& now,
                       Progress& progress) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const std::string description = (fs::path(folder) / "job.json").string();
  if (fs::exists(folder, ec) && o.resume) {
    std::ifstream in(description);
    nlohmann::json then;
    try {
      then = nlohmann::json::parse(in);
    } catch (const std::exception&) {
      then = nullptr;
    }
    if (!then.is_null()) {
      std::string changed;
      const auto differ = [&](const std::string& what) { changed += (changed.empty() ? "" : "; ") + what; };
      if (then.value("geodl", "") != now["geodl"])
        differ("GeoDL's version (" + then.value("geodl", "") + " then, " + now["geodl"].get<std::string>() + " now)");
      if (then["sources"] != now["sources"] || then["validation_vector"] != now["validation_vector"])
        differ("the rasters or the ground truth (another file, or one changed since)");
      for (const auto& [key, value] : now["options"].items())
        if (!then["options"].contains(key) || then["options"][key] != value)
          differ(sampleOptionNamed(key) + ": " + (then["options"].contains(key) ? then["options"][key].dump() : "none") +
                 " then, " + value.dump() + " now");
      if (changed.empty() && then["windows"] != now["windows"]) differ("the windows");
      if (!changed.empty())
        throw InputError("cannot resume the samples in '" + o.output_folder + "': it is not the stopped job: " + changed +
                         ". Give the stopped job's options and files to resume it, or run without " +
                         sampleOptionNamed("resume") + " to start again (what it read is then discarded)");
      progress.log("resuming the samples job stopped in '" + o.output_folder + "'");
      return;
    }
  }
  if (fs::exists(folder, ec)) {
    fs::remove_all(folder, ec);
    progress.log("discarded the windows a stopped samples job read into '" + o.output_folder + "' (" +
                 sampleOptionNamed("resume") + " continues such a job)");
  } else if (o.resume) {
    progress.log("nothing to resume in '" + o.output_folder + "': sampling from the start");
  }
  try {
    fs::create_directories(folder, ec);
    if (ec) throw writeFailure("the samples' journal ('" + folder + "')", folder, ec.value(), ec.message());
    writeTextAtomically(description, now.dump(1));
  } catch (...) {
    fs::remove_all(folder, ec);
    throw;
  }
}

// What every rank must agree on before sharing the windows.
std::string sampleDescription(const SampleOptions& o, size_t windows) {
  return nlohmann::json{{"engine_version", metadata::kVersion},
                        {"windows", windows},
                        {"sample_size", o.sample_size},
                        {"stride", o.stride},
                        {"output_folder", std::filesystem::absolute(o.output_folder).string()},
                        {"sources", o.sources.size()}}
      .dump();
}

}  // namespace

namespace {

// Rank 0 merges the journal's segments (each writer's in window order) into the stores in
// window order: the samples, their order and every statistic are the ones one process gives.
void mergeSegments(const JournalContents& journal, const SampleOptions& options, const Rasters& rasters,
                   const std::vector<Window>& windows, const std::string& data_type, SampleOutputs& outputs,
                   Progress& progress) {
  std::vector<std::unique_ptr<StreamReader>> readers;
  for (const auto& [writer, segments] : journal.streams) {
    std::vector<std::pair<std::string, uint64_t>> files;
    for (const auto& [seq, path] : segments) files.push_back({path, journal.trailers.at(path).records});
    readers.push_back(std::make_unique<StreamReader>(files, options.sample_size, rasters.front()->info().bands,
                                                     data_type));
  }
  const hard_stop::LoopScope loop;
  for (int64_t merged = 0;; ++merged) {
    StreamReader* next = nullptr;
    for (auto& r : readers)
      if (!r->done() && (!next || r->index() < next->index())) next = r.get();
    if (!next) break;
    if ((merged & 31) == 0) {
      progress.checkCancelled();
      progress.report(1.0, "writing the stores: " + std::to_string(merged) + " samples");
    }
    if (next->index() >= windows.size())
      throw IoError("the samples' journal names window " + std::to_string(next->index()) + " of " +
                    std::to_string(windows.size()) + ": another job wrote over it; start the job again");
    outputs.add(windows[next->index()], next->image, next->valid, next->label);
    next->next();
  }
}

SampleResult sampleWindows(const SampleOptions& options, DataParallel& ranks, Progress& progress) {
  checkSampleOptions(options);
  if (ranks.active() && options.world_size > 1)
    throw InputError("--rank and --world-size make one shard by hand, but " + ranks.world().launcher +
                     " started this job's ranks: drop them (rank 0 merges the ranks' samples itself)");
  SampleResult result;
  const int S = options.sample_size;

  // Open everything and check it before writing anything; the folders it creates go again
  // if the run fails. When any rank fails here (a file missing on one machine), every rank
  // stops at once with its message.
  OutputFolders folders;
  OutputLocks locks;  // one job at a time writes these stores (the writing rank's)
  Rasters rasters;
  std::string data_type;
  Labels labels;
  std::vector<Window> windows;
  ranks.together([&] {
    checkFiles(options, progress, ranks.writes() ? &locks : nullptr);
    // The format after the files (an output over an input is named as such first).
    checkOutputExtension(options.footprint_path, FileKind::GeoPackage, "the footprint layer");
    folders.create(options.output_folder, true);
    folders.create(footprintPath(options));
    rasters = openRasters(options);
    data_type = sharedDataType(rasters);
    labels = openLabels(options, rasters, result);
    windows = planWindows(options, rasters);
  });
  ranks.checkSameRun(sampleDescription(options, windows.size()), "create other samples");

  // The journal: rank 0 (or a manual shard) starts it or resumes it; then every rank reads
  // which windows are done (the job's folders are shared between the machines).
  const std::string journal_folder = partialPathFor(
      (std::filesystem::path(options.output_folder) /
       (options.world_size > 1 ? "samples-shard-" + std::to_string(options.rank) : std::string("samples")))
          .string());
  bool journal_open = false;
  if (ranks.writes()) {
    ranks.together([&] {
      openSampleJournal(options, journal_folder, resumeDescription(options, windows.size()), progress);
      journal_open = true;
    });
  } else {
    ranks.together([] {});
  }
  const auto before = readJournal(journal_folder, rasters.size(), ranks.writes());
  ranks.gatherText("");  // rank 0 has removed the segments cut short before any rank writes
  std::vector<bool> done(windows.size(), false);
  int64_t done_windows = 0;
  for (const auto& [path, trailer] : before.trailers)
    for (uint64_t k : trailer.considered)
      if (k < done.size() && !done[k]) {
        done[k] = true;
        ++done_windows;
      }
  if (ranks.writes() && done_windows > 0)
    progress.log("resuming: " + std::to_string(done_windows) + " of " + std::to_string(windows.size()) +
                 " windows were read by the stopped job");
  // Stopped from here on, what it read stays for resume, and the message says so.
  const auto stopped = [&](const std::string& what) {
    return journal_open ? what + "; the windows it read are kept in '" + journal_folder + "': run it again with " +
                              sampleOptionNamed("resume") + " to continue from them"
                        : what;
  };
  const hard_stop::StopNote note([&] { return stopped("sampling stopped"); });

  // The windows left, shared by the ranks: every size-th of them from this rank's. A shard made
  // by hand (rank and world_size) has the windows k with k % world_size == rank, its own.
  const bool by_hand = !ranks.active() && options.world_size > 1;
  const size_t rank = size_t(ranks.active() ? ranks.rank() : options.rank);
  const size_t shards = size_t(ranks.active() ? ranks.size() : 1);
  int64_t job_windows = 0;
  std::vector<size_t> mine;
  for (size_t k = 0, left = 0; k < windows.size(); ++k) {
    if (by_hand && k % size_t(options.world_size) != rank) continue;
    ++job_windows;
    if (!done[k] && left++ % shards == (by_hand ? 0 : rank)) mine.push_back(k);
  }
  const int64_t windows_left = job_windows - done_windows;
  RankProgress shared(progress, ranks, "windows:samples", windows_left, int64_t(mine.size()));
  SegmentWriter segments(journal_folder, before.runs, int(rank), data_type, rasters.size());
  const auto non_finite = [&] {
    std::vector<int64_t> n;
    for (const auto& r : rasters) n.push_back(r->undeclaredNonFinitePixels());
    return n;
  };
  // One process with nothing read before: the windows go into the stores as they are read
  // too (in window order), and the journal is only there for a resume.
  std::optional<SampleOutputs> streamed;
  if (!ranks.active() && done_windows == 0) streamed.emplace(options, rasters, data_type, result);
  std::vector<double> image;
  std::vector<uint8_t> valid, label;
  try {
    {
      const hard_stop::LoopScope loop;
      for (size_t i = 0; i < mine.size(); ++i) {
        const size_t k = mine[i];
        if ((i & 7) == 0) {
          shared.checkCancelled();
          shared.report(double(i) / double(std::max<size_t>(1, mine.size())),
                        "window " + std::to_string(k + 1) + " of " + std::to_string(windows.size()));
        }
        const Window& w = windows[k];
        rasters[w.source]->read(w.x, w.y, S, S, image, valid);
        labels[w.source]->rasterize(w.x, w.y, S, S, label);
        const bool kept = prepareWindow(options, rasters.front()->info().bands, image, valid, label);
        segments.add(k, kept, image, valid, label);
        segments.flush(non_finite());
        if (streamed && kept) streamed->add(w, image, valid, label);
      }
      segments.flush(non_finite(), true);
    }
    ranks.awaitAll("sampled", [&] { shared.showJob(); });
    // Rank 0: every segment merged in window order into the stores, and what was read counted
    // from them (the stopped job's too).
    if (ranks.writes()) {
      const auto all = readJournal(journal_folder, rasters.size(), false);
      std::vector<int64_t> nans(rasters.size(), 0);
      for (const auto& [path, trailer] : all.trailers) {
        result.windows += int64_t(trailer.considered.size());
        for (size_t r = 0; r < nans.size(); ++r) nans[r] += trailer.non_finite[r];
      }
      result.pixels_read = result.windows * int64_t(S) * S;
      if (result.windows != job_windows)
        throw IoError("the samples' journal '" + journal_folder + "' holds " + std::to_string(result.windows) +
                      " windows of " + std::to_string(job_windows) + ": another job wrote there? start the job "
                      "again without resume");
      progress.report(1.0, "writing");
      if (!streamed) {
        streamed.emplace(options, rasters, data_type, result);
        mergeSegments(all, options, rasters, windows, data_type, *streamed, progress);
      }
      SampleOutputs& outputs = *streamed;
      for (size_t i = 0; i < rasters.size(); ++i)
        if (const int64_t n = nans[i])
          result.warnings.push_back("'" + rasters[i]->info().path + "' has " + std::to_string(n) +
                                    " NaN or infinite pixels it does not declare as nodata: they were left out "
                                    "(ignore index); declare a nodata value to silence this");
      outputs.commit(data_type);
      std::error_code ec;
      std::filesystem::remove_all(journal_folder, ec);
      journal_open = false;
    }
  } catch (const Cancelled& e) {  // the same kind of error, saying what there is to resume
    throw Cancelled(stopped(e.what()));
  } catch (const RasterReadError&) {  // the input's fault: a resume would read another file
    if (ranks.writes()) {
      std::error_code ec;
      std::filesystem::remove_all(journal_folder, ec);
    }
    throw;
  } catch (const IoError& e) {
    throw IoError(stopped(e.what()));
  } catch (const InputError&) {  // refused (an empty split): a resume would be refused the same
    if (ranks.writes()) {
      std::error_code ec;
      std::filesystem::remove_all(journal_folder, ec);
    }
    throw;
  }
  ranks.awaitAll("written");
  return result;
}

}  // namespace

SampleResult createSamples(const SampleOptions& options, Progress& progress) {
  DataParallel ranks(options.run.world, options.run.collective_timeout,
                     [] { return std::string("nothing was written: start the job again"); });
  SampleResult result;
  ranks.guarded([&] { result = sampleWindows(options, ranks, progress); });
  ranks.barrier();
  return result;
}

}  // namespace geodl
