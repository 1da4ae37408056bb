#include "app/ml_fixtures.h"

#include <cmath>
#include <filesystem>
#include <random>
#include <vector>

#include "app/train.h"
#include "base/atomic_file.h"
#include "base/errors.h"
#include "model/model_info.h"
#include "io/gis_fixtures.h"
#include "io/sample_store.h"

#include <ogr_spatialref.h>

namespace geodl::test {


// A store of `count` samples: class 1 is a bright rectangle on a dark, noisy background
// (pixel values 40-70 vs 150-180), so a small network learns it in a few epochs.
namespace {

// EPSG:32618 (WGS 84 / UTM zone 18N) as GDAL writes it.
std::string utm18nWkt() {
  OGRSpatialReference srs;
  srs.importFromEPSG(32618);
  char* wkt = nullptr;
  srs.exportToWkt(&wkt);
  const std::string text = wkt ? wkt : "";
  CPLFree(wkt);
  return text;
}

}  // namespace

std::string makeStore(const std::string& path, int count, uint64_t seed, int classes,
                      const std::string& split) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> corner(0, kSize - 8), extent(6, 16), noise(0, 30);
  io::SampleStoreWriter writer(path, kSize, kBands, "Byte");
  std::vector<int64_t> pixels(size_t(classes), 0);
  std::vector<double> sum(kBands, 0), sq(kBands, 0);
  for (int i = 0; i < count; ++i) {
    const int x0 = corner(rng), y0 = corner(rng), w = extent(rng), h = extent(rng);
    std::vector<double> image;
    std::vector<uint8_t> labels;
    for (int y = 0; y < kSize; ++y)
      for (int x = 0; x < kSize; ++x) {
        const int label = (x >= x0 && x < x0 + w && y >= y0 && y < y0 + h) ? classes - 1 : 0;
        labels.push_back(uint8_t(label));
        ++pixels[size_t(label)];
        for (int b = 0; b < kBands; ++b) {
          const double v = 40 + 110 * (label > 0) + noise(rng) + b;
          image.push_back(v);
          sum[b] += v;
          sq[b] += v * v;
        }
      }
    writer.append(image, labels, {x0, y0, kSize, kSize}, {1000.0 + i * kSize, 0.5, 0, 2000, 0, -0.5}, 0);
  }
  io::StoreMetadata m;
  m.engine_version = "test";
  m.split = split;
  m.sample_size = kSize;
  m.bands = kBands;
  m.data_type = "Byte";
  m.num_classes = classes;
  for (int c = 0; c < classes; ++c) {
    m.class_ids.push_back(c);
    m.class_names.push_back(c == 0 ? "background" : c == classes - 1 ? "building" : "other");
  }
  m.class_pixel_counts = pixels;
  const double n = double(count) * kSize * kSize;
  for (int b = 0; b < kBands; ++b) {
    m.band_mean.push_back(sum[b] / n);
    m.band_std.push_back(std::sqrt(sq[b] / n - (sum[b] / n) * (sum[b] / n)));
  }
  m.crs_wkt = utm18nWkt();  // the CRS of the scenes the tests classify
  writer.finish(m);
  writer.commit();
  return path;
}

int sceneTruth(int x, int y) {
  const int cx = x % 40, cy = y % 40;
  return (cx >= 8 && cx < 26 && cy >= 10 && cy < 24) ? 1 : 0;
}

double sceneValue(int x, int y, int band) {
  const uint32_t h = uint32_t(x) * 73856093u ^ uint32_t(y) * 19349663u ^ uint32_t(band) * 83492791u;
  return 40 + 110 * sceneTruth(x, y) + double(h % 31) + band;
}

const std::string& trainedModel() {
  // ctest runs each test in its own process: the model is trained once per build of the
  // tests and kept in the build tree (deterministic training). A cache older than this
  // program is stale: the trainer it came from may have changed.
  static const std::string path = [] {
    const std::string cached = std::string(GEODL_TEST_CACHE_DIR) + "/classify_fixture_model.pt";
    std::error_code ec;
    const auto built = std::filesystem::last_write_time("/proc/self/exe", ec);
    if (!ec && std::filesystem::exists(cached) && std::filesystem::last_write_time(cached) > built &&
        isModelFile(cached))
      return cached;
    TempDir dir;
    TrainOptions o;
    o.train_store = makeStore(dir.path("trn.hdf5"), 48, 11);
    o.val_store = makeStore(dir.path("val.hdf5"), 8, 12, 2, "val");
    o.output_folder = dir.path("model");
    o.epochs = 6;
    o.batch_size = 8;
    o.learning_rate = 2e-3;
    o.run.threads = 2;
    o.seed = 5;
    o.deterministic = true;
    o.augmentation.hflip_prob = 0.5;
    o.augmentation.vflip_prob = 0.5;
    NullProgress progress;
    const std::string trained = train(o, progress).model_path;
    writeFileAtomically(cached, [&](const std::string& temp) {
      std::filesystem::copy_file(trained, temp, std::filesystem::copy_options::overwrite_existing);
    });
    return cached;
  }();
  return path;
}

}  // namespace geodl::test
