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
  const hard_stop::LoopScope loop;
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
  const hard_stop::LoopScope loop;
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
  DataParallel ranks(options.run.world, options.run.collective_timeout,
                     [] { return std::string("nothing was written: start the job again"); });
  SampleResult result;
  ranks.guarded([&] { result = sampleWindows(options, ranks, progress); });
  ranks.barrier();
  return result;
}

}  // namespace geodl
