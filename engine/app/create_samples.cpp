#include "app/create_samples.h"

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

#include <nlohmann/json.hpp>

#include "app/data_parallel.h"
#include "base/atomic_file.h"
#include "base/errors.h"
#include "base/file_identity.h"
#include "base/metadata.h"
#include "io/band_statistics.h"
#include "io/footprints.h"
#include "io/labels.h"
#include "io/raster.h"
#include "io/sample_store.h"
#include "io/validation_area.h"

namespace geodl {

namespace {

const std::vector<std::string> kSplits = {"trn", "val", "tst"};

struct Window {
  size_t source = 0;
  int x = 0, y = 0;
  std::string split;
};

// Window origins along one axis: every `stride` pixels, the last one reaching the edge.
std::vector<int> origins(int length, int size, int stride) {
  std::vector<int> out;
  for (int p = 0;; p += stride) {
    out.push_back(p);
    if (p + size >= length) break;
  }
  return out;
}

void validate(const SampleOptions& o) {
  if (o.sources.empty()) throw InputError("no raster and ground truth to create samples from");
  if (o.sample_size < 8) throw InputError("the sample size must be at least 8 pixels");
  if (o.stride < 1) throw InputError("the distance between samples must be at least 1 pixel");
  if (o.min_annotated_percent < 0 || o.min_annotated_percent > 100)
    throw InputError("the minimum annotated percent must be between 0 and 100");
  if (o.ignore_index < 0 || o.ignore_index > 255)
    throw InputError("the ignore index must be between 0 and 255");
  if (o.num_classes < 0 || o.num_classes > 255)
    throw InputError("the number of classes must be between 1 and 255");
  if (o.world_size < 1 || o.rank < 0 || o.rank >= o.world_size)
    throw InputError("rank must be in [0, world size)");
  if (o.split_mode == SplitMode::ValidationPercent &&
      !(o.validation_percent > 0 && o.validation_percent < 100))
    throw InputError("the validation percentage must be between 0 and 100 (exclusive)");
  if (o.split_mode == SplitMode::ValidationPolygons && o.validation_vector.empty())
    throw InputError("validation by polygons needs a validation polygon layer");
  if (o.output_folder.empty()) throw InputError("no output folder for the samples");
  for (const auto& s : o.sources) {
    if (std::find(kSplits.begin(), kSplits.end(), s.split) == kSplits.end())
      throw InputError("unknown dataset '" + s.split + "' for '" + s.raster +
                       "'; use trn, val or tst");
    if (s.field.empty()) throw InputError("no class field given for '" + s.vector + "'");
  }
}

std::string joinInts(const std::set<int>& values) {
  std::string out;
  for (int v : values) out += (out.empty() ? "" : ", ") + std::to_string(v);
  return out;
}

// Spatial blocks of a raster (4 samples wide) assigned to validation, seeded.
std::vector<uint8_t> validationBlocks(int blocks_x, int blocks_y, double percent, uint64_t seed,
                                      size_t source) {
  const size_t n = size_t(blocks_x) * blocks_y;
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed * 1000003u + source);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<uint8_t> val(n, 0);
  const size_t count = std::max<size_t>(1, size_t(std::llround(n * percent / 100.0)));
  for (size_t i = 0; i < std::min(count, n > 1 ? n - 1 : n); ++i) val[order[i]] = 1;
  return val;
}


// Where a split's store and the footprint layer go.
std::string storePath(const SampleOptions& options, const std::string& split) {
  return (std::filesystem::path(options.output_folder) / (split + "_samples.hdf5")).string();
}
std::string footprintPath(const SampleOptions& options) {
  return options.footprint_path.empty()
             ? (std::filesystem::path(options.output_folder) / "samples_footprint.gpkg").string()
             : options.footprint_path;
}

using Rasters = std::vector<std::unique_ptr<io::RasterReader>>;
using Labels = std::vector<std::unique_ptr<io::LabelRasterizer>>;

// Every raster opened and checked against the options and the others, before anything is written.
Rasters openRasters(const SampleOptions& options) {
  const int S = options.sample_size;
  Rasters rasters;
  for (const auto& s : options.sources) {
    auto reader = std::make_unique<io::RasterReader>(s.raster);
    const auto& info = reader->info();
    if (options.bands > 0 && info.bands != options.bands)
      throw InputError("the raster '" + s.raster + "' has " + std::to_string(info.bands) +
                       " bands but number_of_bands is " + std::to_string(options.bands) +
                       "; set number_of_bands to " + std::to_string(info.bands) +
                       " or use a raster with " + std::to_string(options.bands) + " bands");
    if (std::min(info.width, info.height) < kMinSampleSize)
      throw InputError("the raster '" + s.raster + "' (" + std::to_string(info.width) + " x " +
                       std::to_string(info.height) + " pixels) is smaller than the smallest sample (" +
                       std::to_string(kMinSampleSize) + " x " + std::to_string(kMinSampleSize) +
                       "): no sample can be cut from it; remove it from the CSV or give a larger raster");
    if (info.width < S || info.height < S)
      throw InputError("the sample size (" + std::to_string(S) + ") is larger than the raster '" +
                       s.raster + "' (" + std::to_string(info.width) + " x " +
                       std::to_string(info.height) + "); use a sample size of at most " +
                       std::to_string(std::min(info.width, info.height)));
    if (!rasters.empty()) {
      const auto& first = rasters.front()->info();
      if (info.bands != first.bands)
        throw InputError("the raster '" + s.raster + "' has " + std::to_string(info.bands) +
                         " bands and '" + first.path + "' " + std::to_string(first.bands) +
                         ": the samples of one dataset share their bands");
    }
    rasters.push_back(std::move(reader));
  }
  return rasters;
}

// The stores keep the rasters' own data type; rasters of different types (a Byte and a
// UInt16 image, say) share a floating-point one that holds both exactly.
std::string sharedDataType(const Rasters& rasters) {
  std::string data_type = rasters.front()->info().data_type;
  for (const auto& r : rasters) {
    const std::string& t = r->info().data_type;
    if (t == data_type) continue;
    const bool wide = t == "UInt32" || t == "Int32" || t == "Float64" || data_type == "UInt32" ||
                      data_type == "Int32" || data_type == "Float64";
    data_type = wide ? "Float64" : "Float32";
  }
  return data_type;
}

// Each label file read once; string classes then share one mapping: the names found in
// all of them, in sorted order, from 1. The model's classes (ids 0..n-1, present or not)
// go into `result`.
Labels openLabels(const SampleOptions& options, const Rasters& rasters, SampleResult& result) {
  Labels labels;
  std::set<std::string> names_set;
  for (size_t i = 0; i < options.sources.size(); ++i) {
    const auto& s = options.sources[i];
    io::LabelSource ls{s.vector, s.layer, s.field, options.ignored_values};
    labels.push_back(std::make_unique<io::LabelRasterizer>(ls, rasters[i]->info(), options.ignore_index));
    for (auto& v : labels.back()->stringValues()) names_set.insert(v);
  }
  const std::vector<std::string> string_names(names_set.begin(), names_set.end());
  std::set<int> found;
  std::map<int, std::string> class_names;
  bool any_strings = false, any_ints = false;
  for (auto& rasterizer : labels) {
    if (rasterizer->classes().string_values) rasterizer->numberStringClasses(string_names);
    const auto& table = rasterizer->classes();
    (table.string_values ? any_strings : any_ints) = true;
    for (size_t k = 0; k < table.ids.size(); ++k) {
      found.insert(table.ids[k]);
      class_names[table.ids[k]] = table.names[k];
    }
  }
  if (any_strings && any_ints)
    throw InputError("some class fields hold strings and others integers; use one kind");
  if (options.num_classes > 0 && *found.rbegin() >= options.num_classes)
    throw InputError("the ground truth has class values " + joinInts(found) +
                     " (0 is the background) but num_classes is " + std::to_string(options.num_classes) +
                     ": class ids must be below it; set num_classes to " + std::to_string(*found.rbegin() + 1) +
                     " or declare the extra values ignored");
  if (options.num_classes > 0 && int(found.size()) < options.num_classes)
    result.warnings.push_back("the ground truth has only the class values " + joinInts(found) + " of the " +
                              std::to_string(options.num_classes) + " classes num_classes announces");
  const int num_classes = options.num_classes > 0 ? options.num_classes : *found.rbegin() + 1;
  for (int id = 0; id < num_classes; ++id) {
    result.class_ids.push_back(id);
    auto it = class_names.find(id);
    result.class_names.push_back(it != class_names.end() ? it->second
                                 : (any_strings && id > 0 && size_t(id) <= string_names.size()
                                        ? string_names[id - 1]
                                        : std::to_string(id)));
  }
  return labels;
}

// The windows of one raster and the split of each; windows on a split's boundary are in none.
void planRasterWindows(const SampleOptions& options, size_t i, const io::RasterInfo& info,
                       const io::ValidationArea* area, std::vector<Window>& windows) {
  const int S = options.sample_size;
  const int block = 4 * S;
  const int blocks_x = (info.width + block - 1) / block, blocks_y = (info.height + block - 1) / block;
  std::vector<uint8_t> val_blocks;
  if (options.split_mode == SplitMode::ValidationPercent)
    val_blocks = validationBlocks(blocks_x, blocks_y, options.validation_percent, options.seed, i);
  for (int y : origins(info.height, S, options.stride)) {
    for (int x : origins(info.width, S, options.stride)) {
      Window w{i, x, y, options.sources[i].split};
      if (options.split_mode == SplitMode::ValidationPercent) {
        // A window belongs to a split only if every block it touches does: overlapping
        // windows never straddle training and validation.
        std::set<uint8_t> kinds;
        for (int by = y / block; by <= std::min(blocks_y - 1, (y + S - 1) / block); ++by)
          for (int bx = x / block; bx <= std::min(blocks_x - 1, (x + S - 1) / block); ++bx)
            kinds.insert(val_blocks[size_t(by) * blocks_x + bx]);
        if (kinds.size() != 1) continue;
        w.split = *kinds.begin() ? "val" : "trn";
      } else if (area) {
        const auto place = area->place(x, y, S);
        if (place == io::ValidationArea::Place::Straddles) continue;
        w.split = place == io::ValidationArea::Place::Inside ? "val" : "trn";
      }
      windows.push_back(w);
    }
  }
}

std::vector<Window> planWindows(const SampleOptions& options, const Rasters& rasters) {
  std::vector<Window> windows;
  std::unique_ptr<io::ValidationArea> polygons;  // read once, reprojected onto each raster
  if (options.split_mode == SplitMode::ValidationPolygons)
    polygons = std::make_unique<io::ValidationArea>(options.validation_vector, options.validation_layer);
  for (size_t i = 0; i < rasters.size(); ++i) {
    std::unique_ptr<io::ValidationArea> area;
    if (polygons) area = std::make_unique<io::ValidationArea>(polygons->onGridOf(rasters[i]->info()));
    planRasterWindows(options, i, rasters[i]->info(), area.get(), windows);
  }
  return windows;
}

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
    for (const auto& r : rasters_) {
      meta.sources.push_back(r->info().path);
      meta.source_crs_wkt.push_back(r->info().crs_wkt);
    }
    meta.crs_wkt = rasters_.front()->info().crs_wkt;
    for (auto& [split, store] : stores_) {
      meta.split = split;
      meta.class_pixel_counts = pixel_counts_[split];
      store->finish(meta);
      result_.splits.push_back({split, store->path(), store->size(), pixel_counts_[split]});
    }
    footprints_->finish();
    for (auto& [split, store] : stores_) store->commit();
    footprints_->commit();
  }

 private:
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
// another kind; existing ones are replaced, and the log says so.
void checkFiles(const SampleOptions& options, Progress& progress, bool log) {
  std::vector<JobOutput> outputs;
  for (const auto& split : kSplits) outputs.push_back({"the " + split + " store", storePath(options, split), FileKind::Hdf5});
  outputs.push_back({"the footprint layer", footprintPath(options), FileKind::GeoPackage});
  std::vector<JobFile> inputs;
  for (const auto& s : options.sources) {
    inputs.push_back({"the raster", s.raster});
    inputs.push_back({"the ground truth", s.vector});
  }
  inputs.push_back({"the validation polygons", options.validation_vector});
  for (const auto& line : checkJobFiles(outputs, inputs))
    if (log) progress.log(line);
}

// A rank's kept windows, in window order, for rank 0 to merge: records of the window's
// index, its pixels (float where the stores' type fits in one exactly, else double), valid
// mask and labels, written under a temporary name beside the stores and never renamed (its
// owner removes it).
class SamplePart {
 public:
  SamplePart(const std::string& folder, int rank, const std::string& data_type)
      : out_((std::filesystem::path(folder) / ("samples.rank-" + std::to_string(rank))).string()),
        sink_(out_.temporary(), "the samples' part"), wide_(isWide(data_type)) {}
  const std::string& path() const { return out_.temporary(); }
  void write(uint64_t index, const std::vector<double>& image, const std::vector<uint8_t>& valid,
             const std::vector<uint8_t>& label) {
    sink_.write(&index, sizeof index);
    if (wide_) {
      sink_.write(image.data(), image.size() * sizeof(double));
    } else {
      narrow_.assign(image.begin(), image.end());
      sink_.write(narrow_.data(), narrow_.size() * sizeof(float));
    }
    sink_.write(valid.data(), valid.size());
    sink_.write(label.data(), label.size());
  }
  void close() { sink_.close(); }

  static bool isWide(const std::string& data_type) {
    return !(data_type == "Byte" || data_type == "Int8" || data_type == "UInt16" || data_type == "Int16" ||
             data_type == "Float32");
  }

 private:
  AtomicOutput out_;
  FileSink sink_;
  bool wide_;
  std::vector<float> narrow_;
};

// Reads a part back, record by record.
class SamplePartReader {
 public:
  SamplePartReader(const std::string& path, int sample_size, int bands, const std::string& data_type)
      : path_(path), in_(path, std::ios::binary), pixels_(size_t(sample_size) * sample_size),
        values_(pixels_ * size_t(bands)), wide_(SamplePart::isWide(data_type)) {
    if (!in_) throw IoError("cannot read '" + path + "', another rank's samples: was it removed? start the job again");
    next();
  }
  bool done() const { return done_; }
  uint64_t index() const { return index_; }
  std::vector<double> image;
  std::vector<uint8_t> valid, label;
  void next() {
    if (!in_.read(reinterpret_cast<char*>(&index_), sizeof index_)) {
      done_ = true;
      return;
    }
    image.resize(values_);
    if (wide_) {
      in_.read(reinterpret_cast<char*>(image.data()), std::streamsize(values_ * sizeof(double)));
    } else {
      narrow_.resize(values_);
      in_.read(reinterpret_cast<char*>(narrow_.data()), std::streamsize(values_ * sizeof(float)));
      std::copy(narrow_.begin(), narrow_.end(), image.begin());
    }
    valid.resize(pixels_);
    label.resize(pixels_);
    in_.read(reinterpret_cast<char*>(valid.data()), std::streamsize(pixels_));
    if (!in_.read(reinterpret_cast<char*>(label.data()), std::streamsize(pixels_)))
      throw IoError("'" + path_ + "', another rank's samples, ends in the middle of a sample: start the job again");
  }

 private:
  std::string path_;
  std::ifstream in_;
  size_t pixels_, values_;
  bool wide_;
  std::vector<float> narrow_;
  uint64_t index_ = 0;
  bool done_ = false;
};

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

// Rank 0 merges the ranks' parts (each in window order) into the stores in window order:
// the samples, their order and every statistic are the ones one process gives.
void mergeParts(const std::vector<std::string>& parts, const SampleOptions& options, const Rasters& rasters,
                const std::vector<Window>& windows, const std::string& data_type, SampleOutputs& outputs,
                Progress& progress) {
  std::vector<std::unique_ptr<SamplePartReader>> readers;
  for (const auto& part : parts)
    readers.push_back(std::make_unique<SamplePartReader>(part, options.sample_size, rasters.front()->info().bands,
                                                         data_type));
  for (int64_t merged = 0;; ++merged) {
    SamplePartReader* next = nullptr;
    for (auto& r : readers)
      if (!r->done() && (!next || r->index() < next->index())) next = r.get();
    if (!next) break;
    if ((merged & 31) == 0) {
      progress.checkCancelled();
      progress.report(1.0, "merging the ranks' samples: " + std::to_string(merged));
    }
    if (next->index() >= windows.size())
      throw IoError("a rank's samples name window " + std::to_string(next->index()) + " of " +
                    std::to_string(windows.size()) + ": another job wrote over them; start the job again");
    outputs.add(windows[next->index()], next->image, next->valid, next->label);
    next->next();
  }
}

SampleResult sampleWindows(const SampleOptions& options, DataParallel& ranks, Progress& progress) {
  validate(options);
  if (ranks.active() && options.world_size > 1)
    throw InputError("--rank and --world-size make one shard by hand, but " + ranks.world().launcher +
                     " started this job's ranks: drop them (rank 0 merges the ranks' samples itself)");
  SampleResult result;
  const int S = options.sample_size;

  // Open everything and check it before writing anything; the folders it creates go again
  // if the run fails. When any rank fails here (a file missing on one machine), every rank
  // stops at once with its message.
  OutputFolders folders;
  Rasters rasters;
  std::string data_type;
  Labels labels;
  std::vector<Window> windows;
  ranks.together([&] {
    checkFiles(options, progress, ranks.writes());
    folders.create(options.output_folder, true);
    folders.create(footprintPath(options));
    rasters = openRasters(options);
    data_type = sharedDataType(rasters);
    labels = openLabels(options, rasters, result);
    windows = planWindows(options, rasters);
  });
  ranks.checkSameRun(sampleDescription(options, windows.size()), "create other samples");

  // The stores (rank 0, or this shard's), and with ranks this rank's part.
  std::optional<SampleOutputs> outputs;
  if (ranks.writes()) outputs.emplace(options, rasters, data_type, result);
  std::optional<SamplePart> part;
  PartFiles parts;
  if (ranks.active()) {
    part.emplace(options.output_folder, ranks.rank(), data_type);
    parts.files = ranks.gatherText(part->path());
  }
  const size_t rank = size_t(ranks.active() ? ranks.rank() : options.rank);
  const size_t shards = size_t(ranks.active() ? ranks.size() : options.world_size);
  int64_t mine = 0;
  for (size_t k = rank; k < windows.size(); k += shards) ++mine;
  RankProgress shared(progress, ranks, "windows:samples", int64_t(windows.size()), mine);
  std::vector<double> image;
  std::vector<uint8_t> valid, label;
  for (size_t k = rank; k < windows.size(); k += shards) {
    if ((result.windows & 7) == 0) {
      shared.checkCancelled();
      shared.report(double(result.windows) / double(std::max<int64_t>(1, mine)),
                    "window " + std::to_string(k + 1) + " of " + std::to_string(windows.size()));
    }
    const Window& w = windows[k];
    ++result.windows;
    rasters[w.source]->read(w.x, w.y, S, S, image, valid);
    labels[w.source]->rasterize(w.x, w.y, S, S, label);
    result.pixels_read += int64_t(S) * S;
    if (!prepareWindow(options, rasters.front()->info().bands, image, valid, label)) continue;
    if (part)
      part->write(k, image, valid, label);
    else
      outputs->add(w, image, valid, label);
  }
  // What every rank read, summed.
  std::vector<int64_t> counts = {result.windows, result.pixels_read};
  for (const auto& r : rasters) counts.push_back(r->undeclaredNonFinitePixels());
  if (part) {
    part->close();
    ranks.awaitAll("sampled", [&] { shared.showJob(); });
    ranks.sum(counts);
    if (outputs) mergeParts(parts.files, options, rasters, windows, data_type, *outputs, progress);
  }
  result.windows = counts[0];
  result.pixels_read = counts[1];
  progress.report(1.0, "writing");
  for (size_t i = 0; i < rasters.size(); ++i)
    if (const int64_t n = counts[2 + i])
      result.warnings.push_back("'" + rasters[i]->info().path + "' has " + std::to_string(n) +
                                " NaN or infinite pixels it does not declare as nodata: they were left out "
                                "(ignore index); declare a nodata value to silence this");
  if (outputs) outputs->commit(data_type);
  ranks.awaitAll("written");
  parts.keep = true;
  return result;
}

}  // namespace

SampleResult createSamples(const SampleOptions& options, Progress& progress) {
  DataParallel ranks(options.world, options.collective_timeout, "nothing was written: start the job again");
  SampleResult result;
  ranks.guarded([&] { result = sampleWindows(options, ranks, progress); });
  ranks.barrier();
  return result;
}

}  // namespace geodl
