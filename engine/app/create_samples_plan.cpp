// Stage 1 of the samples job: the options checked, every raster and label file opened and
// checked against the others, and the windows planned with their splits; nothing written.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "app/create_samples_stages.h"
#include "app/data_folder.h"
#include "base/errors.h"
#include "base/file_kind.h"
#include "io/validation_area.h"

namespace geodl {

namespace {

std::vector<int> origins(int length, int size, int stride) {
  std::vector<int> out;
  for (int p = 0;; p += stride) {
    out.push_back(p);
    if (p + size >= length) break;
  }
  return out;
}

}  // namespace

void checkSampleOptions(const SampleOptions& o) {
  // What the job cannot run without, with the key and flag that give it.
  if (o.output_folder.empty())
    throw InputError("no data folder: give global.data_path in the config or --data-path");
  if (o.sources.empty())
    throw InputError("no raster and ground truth: give sample.prep_csv_file in the config or --prep-csv-file");
  checkOptions(sampleOptionTable(), o);
  if (o.ignore_index < 0 || o.ignore_index > 255)
    throw InputError("the ignore index must be from 0 to 255, not " + std::to_string(o.ignore_index));
  if (o.rank >= o.world_size)
    throw InputError("the rank (" + std::to_string(o.rank) + ") must be below the world size (" +
                     std::to_string(o.world_size) + "); ranks are numbered from 0");
  if (o.split_mode == SplitMode::ValidationPercent && !(o.validation_percent > 0))
    throw InputError("the split by validation percentage needs a percentage above 0 (val_percent: 20, say)");
  if (o.split_mode == SplitMode::ValidationPolygons && o.validation_vector.empty())
    throw InputError("validation by polygons needs a validation polygon layer");
  for (const auto& s : o.sources) {
    if (std::find(kSplits.begin(), kSplits.end(), s.split) == kSplits.end())
      throw InputError("unknown dataset '" + s.split + "' for '" + s.raster +
                       "'; use trn, val or tst");
    if (s.field.empty()) throw InputError("no class field given for '" + s.vector + "'");
  }
}

namespace {

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


}  // namespace

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
    for (const auto& w : labels.back()->warnings()) result.warnings.push_back(w);
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
namespace {

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

// Before any window is read: a split that the plan leaves empty is refused saying why (the
// windows the filters leave out are counted later, when their pixels are read).
void checkSplitsPlanned(const SampleOptions& options, const Rasters& rasters, const std::vector<Window>& windows) {
  if (options.split_mode == SplitMode::FromSources) return;
  size_t val = 0;
  for (const auto& w : windows) val += w.split == "val";
  const size_t trn = windows.size() - val;
  if (trn > 0 && val > 0) return;
  const std::string empty = trn == 0 ? "training" : "validation", full = trn == 0 ? "validation" : "training";
  const int S = options.sample_size;
  if (options.split_mode == SplitMode::ValidationPercent) {
    size_t blocks = 0;
    for (const auto& r : rasters) {
      const int block = 4 * S;
      blocks += size_t((r->info().width + block - 1) / block) * size_t((r->info().height + block - 1) / block);
    }
    throw InputError("the split by percentage gave every window to " + full + ": it draws blocks of 4 x 4 samples (" +
                     std::to_string(4 * S) + " px square), and the raster" + (rasters.size() > 1 ? "s hold " : " holds ") +
                     std::to_string(blocks) + " block" + (blocks == 1 ? "" : "s") + ", too few to leave one for " + empty +
                     "; use a smaller samples_size, larger or more rasters, validation polygons (validation_vector) or "
                     "each line's dataset column (split: dataset)");
  }
  throw InputError("no window of " + std::to_string(S) + " px lies wholly " + (trn == 0 ? "outside" : "inside") +
                   " the validation polygons of '" + options.validation_vector + "', so the " + empty +
                   " split would be empty (windows that straddle their border are left out); draw " +
                   (trn == 0 ? "fewer or smaller" : "larger") + " validation polygons or use a smaller samples_size");
}

}  // namespace

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
  checkSplitsPlanned(options, rasters, windows);
  return windows;
}


std::string storePath(const SampleOptions& options, const std::string& split) {
  return storeOf(options.output_folder, split);
}
std::string footprintPath(const SampleOptions& options) {
  return options.footprint_path.empty()
             ? (std::filesystem::path(options.output_folder) / "samples_footprint.gpkg").string()
             : options.footprint_path;
}

}  // namespace geodl
