#include "app/create_samples.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <sstream>

#include "core/errors.h"
#include "core/metadata.h"
#include "io/footprints.h"
#include "io/gdal_util.h"
#include "io/labels.h"
#include "io/raster.h"
#include "io/sample_store.h"

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

}  // namespace

SampleResult createSamples(const SampleOptions& options, Progress& progress) {
  validate(options);
  io::initGdal();
  SampleResult result;
  const int S = options.sample_size;

  // Open everything and check it before writing anything.
  std::vector<std::unique_ptr<io::RasterReader>> rasters;
  for (const auto& s : options.sources) {
    auto reader = std::make_unique<io::RasterReader>(s.raster);
    const auto& info = reader->info();
    if (options.bands > 0 && info.bands != options.bands)
      throw InputError("the raster '" + s.raster + "' has " + std::to_string(info.bands) +
                       " bands but number_of_bands is " + std::to_string(options.bands) +
                       "; set number_of_bands to " + std::to_string(info.bands) +
                       " or use a raster with " + std::to_string(options.bands) + " bands");
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
  const auto& first_info = rasters.front()->info();
  const int bands = first_info.bands;
  // The stores keep the rasters' own data type; rasters of different types (a Byte and a
  // UInt16 image, say) share a floating-point one that holds both exactly.
  std::string data_type = first_info.data_type;
  for (const auto& r : rasters) {
    const std::string& t = r->info().data_type;
    if (t == data_type) continue;
    const bool wide = t == "UInt32" || t == "Int32" || t == "Float64" || data_type == "UInt32" ||
                      data_type == "Int32" || data_type == "Float64";
    data_type = wide ? "Float64" : "Float32";
  }

  // Each label file read once; string classes then share one mapping: the names found in
  // all of them, in sorted order, from 1.
  std::vector<std::unique_ptr<io::LabelRasterizer>> labels;
  std::set<std::string> names_set;
  for (size_t i = 0; i < options.sources.size(); ++i) {
    const auto& s = options.sources[i];
    io::LabelSource ls{s.vector, s.layer, s.field, options.ignored_values};
    labels.push_back(
        std::make_unique<io::LabelRasterizer>(ls, rasters[i]->info(), options.ignore_index));
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
                     " (0 is the background) but num_classes is " +
                     std::to_string(options.num_classes) + ": class ids must be below it; set "
                     "num_classes to " + std::to_string(*found.rbegin() + 1) +
                     " or declare the extra values ignored");
  if (options.num_classes > 0 && int(found.size()) < options.num_classes)
    result.warnings.push_back("the ground truth has only the class values " + joinInts(found) +
                              " of the " + std::to_string(options.num_classes) +
                              " classes num_classes announces");
  // Class ids 0..n-1 are all model classes, whether or not present.
  const int num_classes = options.num_classes > 0 ? options.num_classes : *found.rbegin() + 1;
  for (int id = 0; id < num_classes; ++id) {
    result.class_ids.push_back(id);
    auto it = class_names.find(id);
    result.class_names.push_back(it != class_names.end()
                                     ? it->second
                                     : (any_strings && id > 0 && size_t(id) <= string_names.size()
                                            ? string_names[id - 1]
                                            : std::to_string(id)));
  }

  // Validation polygons, in each raster's CRS.
  std::vector<std::unique_ptr<OGRGeometry>> validation_area(options.sources.size());
  if (options.split_mode == SplitMode::ValidationPolygons) {
    io::Dataset ds = io::openVector(options.validation_vector);
    OGRLayer* layer = options.validation_layer.empty()
                          ? ds->GetLayer(0)
                          : ds->GetLayerByName(options.validation_layer.c_str());
    if (!layer || !layer->GetSpatialRef())
      throw InputError("the validation polygons '" + options.validation_vector +
                       (options.validation_layer.empty() ? "" : "|" + options.validation_layer) +
                       "' are missing or have no CRS");
    auto srs = io::gisSrs(layer->GetSpatialRef());
    OGRGeometryCollection all;
    for (auto& f : *layer)
      if (f->GetGeometryRef()) all.addGeometry(f->GetGeometryRef());
    if (all.IsEmpty())
      throw InputError("the validation layer '" + options.validation_vector + "' has no polygon");
    std::unique_ptr<OGRGeometry> merged(all.UnionCascaded());
    if (!merged) merged.reset(all.clone());
    for (size_t i = 0; i < rasters.size(); ++i) {
      std::unique_ptr<OGRGeometry> area(merged->clone());
      OGRSpatialReference rsrs;
      rsrs.importFromWkt(rasters[i]->info().crs_wkt.c_str());
      rsrs.SetAxisMappingStrategy(OAMS_TRADITIONAL_GIS_ORDER);
      if (!srs->IsSame(&rsrs)) {
        std::unique_ptr<OGRCoordinateTransformation> ct(
            OGRCreateCoordinateTransformation(srs.get(), &rsrs));
        if (!ct || area->transform(ct.get()) != OGRERR_NONE)
          throw InputError("cannot reproject the validation polygons into the CRS of '" +
                           rasters[i]->info().path + "'");
      }
      validation_area[i] = std::move(area);
    }
  }

  // The windows, and the split of each.
  std::vector<Window> windows;
  for (size_t i = 0; i < rasters.size(); ++i) {
    const auto& info = rasters[i]->info();
    const auto xs = origins(info.width, S, options.stride);
    const auto ys = origins(info.height, S, options.stride);
    const int block = 4 * S;
    const int blocks_x = (info.width + block - 1) / block, blocks_y = (info.height + block - 1) / block;
    std::vector<uint8_t> val_blocks;
    if (options.split_mode == SplitMode::ValidationPercent)
      val_blocks = validationBlocks(blocks_x, blocks_y, options.validation_percent, options.seed, i);
    const auto& g = info.geotransform;
    for (int y : ys) {
      for (int x : xs) {
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
        } else if (options.split_mode == SplitMode::ValidationPolygons) {
          OGRLinearRing ring;
          const std::pair<int, int> corners[] = {{0, 0}, {S, 0}, {S, S}, {0, S}, {0, 0}};
          for (auto [c, r] : corners)
            ring.addPoint(g[0] + (x + c) * g[1] + (y + r) * g[2], g[3] + (x + c) * g[4] + (y + r) * g[5]);
          OGRPolygon rect;
          rect.addRing(&ring);
          if (rect.Within(validation_area[i].get()))
            w.split = "val";
          else if (rect.Intersects(validation_area[i].get()))
            continue;  // straddles the boundary: in neither split
          else
            w.split = "trn";
        }
        windows.push_back(w);
      }
    }
  }

  // Splits that will be written: those the sources or the split mode ask for.
  std::set<std::string> wanted;
  if (options.split_mode == SplitMode::FromSources) {
    for (const auto& s : options.sources) wanted.insert(s.split);
  } else {
    wanted = {"trn", "val"};
  }

  std::filesystem::create_directories(options.output_folder);
  std::map<std::string, std::unique_ptr<io::SampleStoreWriter>> stores;
  for (const auto& split : kSplits) {
    if (!wanted.count(split)) continue;
    stores[split] = std::make_unique<io::SampleStoreWriter>(
        (std::filesystem::path(options.output_folder) / (split + "_samples.hdf5")).string(), S,
        bands, data_type);
  }
  result.footprint_path = options.footprint_path.empty()
                              ? (std::filesystem::path(options.output_folder) /
                                 "samples_footprint.gpkg").string()
                              : options.footprint_path;
  io::FootprintWriter footprints(result.footprint_path, first_info.crs_wkt, result.class_ids);

  std::map<std::string, std::vector<int64_t>> pixel_counts;
  for (const auto& [split, store] : stores) pixel_counts[split].assign(num_classes, 0);
  std::vector<double> sum(bands, 0.0), sum_sq(bands, 0.0);
  int64_t stat_count = 0;

  std::vector<double> image;
  std::vector<uint8_t> valid, label;
  const double min_fraction = options.min_annotated_percent / 100.0;
  for (size_t k = 0; k < windows.size(); ++k) {
    if (k % size_t(options.world_size) != size_t(options.rank)) continue;
    if ((k & 7) == 0) {
      progress.checkCancelled();
      progress.report(double(k) / windows.size(),
                      "window " + std::to_string(k + 1) + " of " + std::to_string(windows.size()));
    }
    const Window& w = windows[k];
    ++result.windows;
    rasters[w.source]->read(w.x, w.y, S, S, image, valid);
    labels[w.source]->rasterize(w.x, w.y, S, S, label);
    result.pixels_read += int64_t(S) * S;
    int64_t annotated = 0;
    for (size_t p = 0; p < label.size(); ++p) {
      bool ignored = !valid[p];
      if (options.mask_reference && !ignored) {
        bool zero = true;
        for (int b = 0; b < bands && zero; ++b) zero = image[p * bands + b] == 0.0;
        ignored = zero;
      }
      if (ignored || (options.unlabelled_ignored && label[p] == 0))
        label[p] = uint8_t(options.ignore_index);
      if (options.mask_input_image && label[p] == 0)
        for (int b = 0; b < bands; ++b) image[p * bands + b] = 0.0;
      if (label[p] != 0 && label[p] != options.ignore_index) ++annotated;
    }
    const double fraction = double(annotated) / double(label.size());
    if (options.remove_background && annotated == 0) continue;
    if (fraction < min_fraction) continue;

    std::vector<int64_t> counts(num_classes, 0);
    for (uint8_t v : label)
      if (v < num_classes) ++counts[v];
    auto& totals = pixel_counts[w.split];
    for (int c = 0; c < num_classes; ++c) totals[c] += counts[c];
    if (w.split == "trn") {
      for (size_t p = 0; p < valid.size(); ++p) {
        if (!valid[p]) continue;
        for (int b = 0; b < bands; ++b) {
          const double v = image[p * bands + b];
          sum[b] += v;
          sum_sq[b] += v * v;
        }
        ++stat_count;
      }
    }
    const auto& g = rasters[w.source]->info().geotransform;
    const std::array<double, 6> sample_gt = {g[0] + w.x * g[1] + w.y * g[2], g[1], g[2],
                                             g[3] + w.x * g[4] + w.y * g[5], g[4], g[5]};
    const std::array<int, 4> window = {w.x, w.y, S, S};
    auto& store = *stores.at(w.split);
    footprints.add(w.split, store.size(), options.sources[w.source].raster, window, sample_gt, counts);
    store.append(image, label, window, sample_gt, int(w.source));
  }
  progress.report(1.0, "writing");

  for (const auto& [split, store] : stores) {
    if (store->size() == 0)
      throw InputError("no sample for the '" + split + "' split: every window was left out "
                       "(lower min_annotated_percent, turn off remove_background, or check that "
                       "the ground truth covers the rasters of that split)");
  }
  result.band_mean.assign(bands, 0.0);
  result.band_std.assign(bands, 0.0);
  if (stat_count > 0) {
    for (int b = 0; b < bands; ++b) {
      const double mean = sum[b] / stat_count;
      result.band_mean[b] = mean;
      result.band_std[b] = std::sqrt(std::max(0.0, sum_sq[b] / stat_count - mean * mean));
    }
  }
  io::StoreMetadata meta;
  meta.engine_version = metadata::kVersion;
  meta.sample_size = S;
  meta.bands = bands;
  meta.data_type = data_type;
  meta.num_classes = num_classes;
  meta.ignore_index = options.ignore_index;
  meta.class_ids = result.class_ids;
  meta.class_names = result.class_names;
  meta.band_mean = result.band_mean;
  meta.band_std = result.band_std;
  for (const auto& r : rasters) {
    meta.sources.push_back(r->info().path);
    meta.source_crs_wkt.push_back(r->info().crs_wkt);
  }
  meta.crs_wkt = first_info.crs_wkt;
  for (auto& [split, store] : stores) {
    meta.split = split;
    meta.class_pixel_counts = pixel_counts[split];
    store->commit(meta);
    result.splits.push_back({split, store->path(), store->size(), pixel_counts[split]});
  }
  footprints.commit();
  return result;
}

}  // namespace geodl
