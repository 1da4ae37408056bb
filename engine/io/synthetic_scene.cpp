#include "io/synthetic_scene.h"

#include <gdal_alg.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <random>
#include <vector>

#include "base/errors.h"
#include "io/gdal_util.h"

namespace geodl::io {

namespace {

struct Feature {
  std::string cls;
  int id = 0;
  std::vector<std::pair<double, double>> ring;  // pixel coordinates, closed
  double minx = 0, miny = 0, maxx = 0, maxy = 0;
  std::array<int, 3> color{};
};

void bounds(Feature& f) {
  f.minx = f.miny = 1e18;
  f.maxx = f.maxy = -1e18;
  for (auto [x, y] : f.ring) {
    f.minx = std::min(f.minx, x);
    f.maxx = std::max(f.maxx, x);
    f.miny = std::min(f.miny, y);
    f.maxy = std::max(f.maxy, y);
  }
}

bool overlaps(const Feature& a, const Feature& b, double margin) {
  return !(a.maxx + margin < b.minx || b.maxx + margin < a.minx || a.maxy + margin < b.miny ||
           b.maxy + margin < a.miny);
}

// Smooth value noise in [0, 1): a hashed lattice every `cell` pixels, interpolated.
double hash01(uint64_t seed, int64_t x, int64_t y) {
  uint64_t h = seed ^ (uint64_t(x) * 0x9E3779B97F4A7C15ull) ^ (uint64_t(y) * 0xC2B2AE3D27D4EB4Full);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return double(h >> 11) / double(1ull << 53);
}

double valueNoise(uint64_t seed, double x, double y, double cell) {
  const double fx = x / cell, fy = y / cell;
  const int64_t x0 = int64_t(std::floor(fx)), y0 = int64_t(std::floor(fy));
  const double tx = fx - x0, ty = fy - y0;
  const double sx = tx * tx * (3 - 2 * tx), sy = ty * ty * (3 - 2 * ty);
  const double a = hash01(seed, x0, y0), b = hash01(seed, x0 + 1, y0);
  const double c = hash01(seed, x0, y0 + 1), d = hash01(seed, x0 + 1, y0 + 1);
  return (a * (1 - sx) + b * sx) * (1 - sy) + (c * (1 - sx) + d * sx) * sy;
}

// The scene's features: four roads across it, then water, vegetation and buildings that do
// not overlap (in pixel coordinates).
std::vector<Feature> layoutScene(const SceneOptions& o, std::mt19937_64& rng) {
  auto uniform = [&](double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng); };
  const double n = o.size;
  std::vector<Feature> features;

  auto add = [&](Feature f, double margin, bool against_roads) {
    bounds(f);
    for (const auto& g : features) {
      if (g.cls == "road" && !against_roads) continue;
      if (overlaps(f, g, margin)) return false;
    }
    features.push_back(std::move(f));
    return true;
  };
  // Roads: two horizontal and two vertical strips across the scene.
  for (int k = 0; k < 4; ++k) {
    Feature f{"road", 2, {}, 0, 0, 0, 0, {118, 118, 122}};
    const double w = uniform(8, 14), c = uniform(0.15, 0.85) * n;
    if (k < 2)
      f.ring = {{0, c}, {n, c}, {n, c + w}, {0, c + w}, {0, c}};
    else
      f.ring = {{c, 0}, {c + w, 0}, {c + w, n}, {c, n}, {c, 0}};
    bounds(f);
    features.push_back(f);
  }
  auto blob = [&](const std::string& cls, int id, double rmin, double rmax,
                  std::array<int, 3> color) {
    Feature f{cls, id, {}, 0, 0, 0, 0, color};
    const double cx = uniform(0.05, 0.95) * n, cy = uniform(0.05, 0.95) * n, r = uniform(rmin, rmax);
    const double p1 = uniform(0, 6.28), p2 = uniform(0, 6.28), a1 = uniform(0.1, 0.25),
                 a2 = uniform(0.05, 0.15);
    for (int i = 0; i <= 32; ++i) {
      const double t = 2 * M_PI * (i % 32) / 32.0;
      const double rr = r * (1 + a1 * std::sin(2 * t + p1) + a2 * std::sin(5 * t + p2));
      f.ring.emplace_back(cx + rr * std::cos(t), cy + rr * std::sin(t));
    }
    return f;
  };
  const int waters = 1 + int(rng() % 2);
  for (int i = 0, tries = 0; i < waters && tries < 50; ++tries)
    if (add(blob("water", 4, 0.05 * n, 0.11 * n, {32, 62, 118}), 6, false)) ++i;
  const int vegetation = 6 + int(rng() % 5);
  for (int i = 0, tries = 0; i < vegetation && tries < 200; ++tries)
    if (add(blob("vegetation", 3, 0.02 * n, 0.055 * n, {46, 104, 42}), 4, false)) ++i;
  const std::array<std::array<int, 3>, 4> roofs = {{{176, 82, 62}, {150, 150, 154}, {92, 90, 102}, {204, 192, 168}}};
  const int buildings = int(30 + rng() % 30) * o.size * o.size / (1024 * 1024) + 8;
  for (int i = 0, tries = 0; i < buildings && tries < buildings * 20; ++tries) {
    Feature f{"building", 1, {}, 0, 0, 0, 0, roofs[rng() % roofs.size()]};
    const double cx = uniform(0.03, 0.97) * n, cy = uniform(0.03, 0.97) * n;
    const double w = uniform(10, 30), h = uniform(10, 24), a = uniform(0, M_PI);
    const std::pair<double, double> corners[] = {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}, {-1, -1}};
    for (auto [u, v] : corners)
      f.ring.emplace_back(cx + u * w / 2 * std::cos(a) - v * h / 2 * std::sin(a),
                          cy + u * w / 2 * std::sin(a) + v * h / 2 * std::cos(a));
    if (add(f, 4, true)) ++i;
  }

  return features;
}

// The labels, in the vector file the samples are made from (written at `temporary`).
void writeLabels(const std::string& path, const std::string& temporary, OGRSpatialReference& srs,
                 const std::vector<Feature>& features, const std::vector<std::unique_ptr<OGRPolygon>>& polygons) {
  GDALDriver* gpkg = GetGDALDriverManager()->GetDriverByName("GPKG");
  Dataset ds(gpkg->Create(temporary.c_str(), 0, 0, 0, GDT_Unknown, nullptr));
  if (!ds) throw gdalWriteFailure("'" + path + "'", path);
  OGRLayer* layer = ds->CreateLayer("labels", &srs, wkbPolygon, nullptr);
  OGRFieldDefn cls("class", OFTString), id("class_id", OFTInteger);
  if (!layer || layer->CreateField(&cls) != OGRERR_NONE || layer->CreateField(&id) != OGRERR_NONE)
    throw gdalWriteFailure("'" + path + "'", path);
  ds->StartTransaction();
  for (size_t i = 0; i < features.size(); ++i) {
    OGRFeature feature(layer->GetLayerDefn());
    feature.SetField("class", features[i].cls.c_str());
    feature.SetField("class_id", features[i].id);
    feature.SetGeometry(polygons[i].get());
    if (layer->CreateFeature(&feature) != OGRERR_NONE) throw gdalWriteFailure("'" + path + "'", path);
  }
  if (ds->CommitTransaction() != OGRERR_NONE) throw gdalWriteFailure("'" + path + "'", path);
  closeWritten(ds, "'" + path + "'", path);
}

// Which feature covers each pixel (index + 1, 0: none): burned in ascending class id, the
// samples' rule.
std::vector<int32_t> featureOwners(const SceneOptions& o, const double* gt, const std::vector<Feature>& features,
                                   const std::vector<std::unique_ptr<OGRPolygon>>& polygons) {
  GDALDriver* mem = GetGDALDriverManager()->GetDriverByName("MEM");
  Dataset owner(mem->Create("", o.size, o.size, 1, GDT_Int32, nullptr));
  owner->SetGeoTransform(const_cast<double*>(gt));
  std::vector<size_t> order(features.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return features[a].id < features[b].id; });
  std::vector<OGRGeometryH> handles;
  std::vector<double> burns;
  for (size_t i : order) {
    handles.push_back(OGRGeometry::ToHandle(polygons[i].get()));
    burns.push_back(double(i + 1));
  }
  int band_list[1] = {1};
  GDALRasterizeGeometries(GDALDataset::ToHandle(owner.get()), 1, band_list, int(handles.size()),
                          handles.data(), nullptr, nullptr, burns.data(), nullptr, nullptr, nullptr);
  std::vector<int32_t> who(size_t(o.size) * o.size);
  if (owner->GetRasterBand(1)->RasterIO(GF_Read, 0, 0, o.size, o.size, who.data(), o.size,
                                        o.size, GDT_Int32, 0, 0, nullptr) != CE_None)
    throw IoError(gdalMessage("rasterizing the scene failed"));

  return who;
}

// A colour per class, textured by smooth noise and per-pixel noise.
std::vector<uint8_t> paintScene(const SceneOptions& o, const std::vector<Feature>& features,
                                const std::vector<int32_t>& who, std::mt19937_64& rng) {
  std::vector<uint8_t> rgb(size_t(o.size) * o.size * 3);
  std::normal_distribution<double> grain(0.0, 1.0);
  for (int r = 0; r < o.size; ++r) {
    for (int c = 0; c < o.size; ++c) {
      const size_t p = size_t(r) * o.size + c;
      const int32_t f = who[p];
      std::array<int, 3> base = {112, 102, 74};  // bare soil and dry grass
      double texture = 18, smooth = 28;
      if (f > 0) {
        const auto& feat = features[size_t(f - 1)];
        base = feat.color;
        if (feat.cls == "vegetation") texture = 22, smooth = 30;
        if (feat.cls == "water") texture = 4, smooth = 10;
        if (feat.cls == "road") texture = 8, smooth = 8;
        if (feat.cls == "building") texture = 6, smooth = 6;
      }
      const double s = (valueNoise(o.seed, c, r, 24) - 0.5) * smooth +
                       (valueNoise(o.seed + 7, c, r, 6) - 0.5) * smooth * 0.5;
      for (int b = 0; b < 3; ++b) {
        const double v = base[b] + s + grain(rng) * texture * 0.5;
        rgb[p * 3 + b] = uint8_t(std::clamp(v, 0.0, 255.0));
      }
    }
  }
  return rgb;
}

void writeRaster(const std::string& path, const std::string& temporary, const SceneOptions& o, const double* gt,
                 OGRSpatialReference& srs, const std::vector<uint8_t>& rgb) {
  GDALDriver* gtiff = GetGDALDriverManager()->GetDriverByName("GTiff");
  const char* create_options[] = {"TILED=YES", "COMPRESS=DEFLATE", "PHOTOMETRIC=RGB", nullptr};
  Dataset out(gtiff->Create(temporary.c_str(), o.size, o.size, 3, GDT_Byte, const_cast<char**>(create_options)));
  if (!out) throw gdalWriteFailure("'" + path + "'", path);
  out->SetGeoTransform(const_cast<double*>(gt));
  out->SetSpatialRef(&srs);
  if (out->RasterIO(GF_Write, 0, 0, o.size, o.size, const_cast<uint8_t*>(rgb.data()), o.size, o.size, GDT_Byte, 3,
                    nullptr, 3, GSpacing(3) * o.size, 1, nullptr) != CE_None)
    throw gdalWriteFailure("'" + path + "'", path);
  closeWritten(out, "'" + path + "'", path);
}

}  // namespace

SceneFiles makeSyntheticScene(const std::string& folder, const std::string& name, const SceneOptions& o,
                              std::vector<AtomicOutput>* pending) {
  initGdal();
  checkWritableFolder(folder);
  std::mt19937_64 rng(o.seed);
  const std::vector<Feature> features = layoutScene(o, rng);

  // Georeferencing: pixel (col, row) -> map.
  const double gt[6] = {o.origin_x, o.pixel_size, 0, o.origin_y, 0, -o.pixel_size};
  OGRSpatialReference srs;
  srs.importFromEPSG(o.epsg);
  srs.SetAxisMappingStrategy(OAMS_TRADITIONAL_GIS_ORDER);
  std::vector<std::unique_ptr<OGRPolygon>> polygons;
  for (const auto& f : features) {
    OGRLinearRing ring;
    for (auto [x, y] : f.ring) ring.addPoint(gt[0] + x * gt[1], gt[3] + y * gt[5]);
    auto polygon = std::make_unique<OGRPolygon>();
    polygon->addRing(&ring);
    polygons.push_back(std::move(polygon));
  }
  SceneFiles files;
  files.labels = (std::filesystem::path(folder) / (name + "_labels.gpkg")).string();
  files.raster = (std::filesystem::path(folder) / (name + ".tif")).string();
  AtomicOutput labels(files.labels, ".gpkg"), raster(files.raster, ".tif");
  writeLabels(files.labels, labels.temporary(), srs, features, polygons);
  writeRaster(files.raster, raster.temporary(), o, gt, srs,
              paintScene(o, features, featureOwners(o, gt, features, polygons), rng));
  labels.finish();
  raster.finish();
  if (pending) {
    pending->push_back(std::move(labels));
    pending->push_back(std::move(raster));
  } else {
    labels.commit();
    raster.commit();
  }
  return files;
}

}  // namespace geodl::io
