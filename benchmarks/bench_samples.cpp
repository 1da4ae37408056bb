// Sample creation: samples per second and MB/s on the Massachusetts data, and peak memory
// on generated rasters of 2000 x 2000 and 20000 x 20000 pixels (each sampled in a child
// process, so each peak is its own).
#include <gdal_priv.h>
#include <ogrsf_frmts.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "app/create_samples.h"
#include "base/errors.h"
#include "core/exception_text.h"
#include "io/gdal_util.h"

namespace fs = std::filesystem;

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A tiled 3-band Byte GeoTIFF of size x size with a cheap texture, written block by block,
// and a GeoPackage with one building every 200 pixels.
void makeLargeScene(const std::string& raster, const std::string& vector, int size) {
  geodl::io::initGdal();
  GDALDriver* gtiff = GetGDALDriverManager()->GetDriverByName("GTiff");
  const char* options[] = {"TILED=YES", "BLOCKXSIZE=256", "BLOCKYSIZE=256", "BIGTIFF=IF_SAFER",
                           nullptr};
  geodl::io::Dataset ds(gtiff->Create(raster.c_str(), size, size, 3, GDT_Byte,
                                      const_cast<char**>(options)));
  double gt[6] = {500000, 0.5, 0, 5000000, 0, -0.5};
  ds->SetGeoTransform(gt);
  OGRSpatialReference srs;
  srs.importFromEPSG(32618);
  srs.SetAxisMappingStrategy(OAMS_TRADITIONAL_GIS_ORDER);
  ds->SetSpatialRef(&srs);
  std::vector<uint8_t> block(256 * 256 * 3);
  for (int by = 0; by < size; by += 256) {
    for (int bx = 0; bx < size; bx += 256) {
      const int w = std::min(256, size - bx), h = std::min(256, size - by);
      for (int r = 0; r < h; ++r)
        for (int c = 0; c < w; ++c)
          for (int b = 0; b < 3; ++b)
            block[(size_t(r) * w + c) * 3 + b] =
                uint8_t((((bx + c) * 7 + (by + r) * 13 + b * 50) ^ ((bx + c) >> 3)) & 0xff);
      if (ds->RasterIO(GF_Write, bx, by, w, h, block.data(), w, h, GDT_Byte, 3, nullptr, 3,
                       GSpacing(3) * w, 1, nullptr) != CE_None)
        throw std::runtime_error("cannot write " + raster);
    }
  }
  ds.reset();
  GDALDriver* gpkg = GetGDALDriverManager()->GetDriverByName("GPKG");
  fs::remove(vector);
  geodl::io::Dataset v(gpkg->Create(vector.c_str(), 0, 0, 0, GDT_Unknown, nullptr));
  OGRLayer* layer = v->CreateLayer("buildings", &srs, wkbPolygon, nullptr);
  OGRFieldDefn field("class", OFTInteger);
  layer->CreateField(&field);
  v->StartTransaction();
  for (int y = 50; y + 40 < size; y += 200) {
    for (int x = 50; x + 60 < size; x += 200) {
      OGRFeature f(layer->GetLayerDefn());
      f.SetField("class", 1);
      OGRLinearRing ring;
      const double x0 = gt[0] + x * gt[1], y0 = gt[3] + y * gt[5];
      const double x1 = x0 + 60 * gt[1], y1 = y0 + 40 * gt[5];
      ring.addPoint(x0, y0);
      ring.addPoint(x1, y0);
      ring.addPoint(x1, y1);
      ring.addPoint(x0, y1);
      ring.addPoint(x0, y0);
      OGRPolygon polygon;
      polygon.addRing(&ring);
      f.SetGeometry(&polygon);
      if (layer->CreateFeature(&f) != OGRERR_NONE) throw std::runtime_error("cannot write " + vector);
    }
  }
  v->CommitTransaction();
}

int runSamples(const std::string& raster, const std::string& vector, const std::string& out,
               int size, int stride) {
  geodl::SampleOptions o;
  o.sources = {{raster, vector, "", "class", "trn"}};
  o.output_folder = out;
  o.sample_size = size;
  o.stride = stride;
  o.num_classes = 2;
  geodl::NullProgress progress;
  const double t0 = now();
  const auto result = geodl::createSamples(o, progress);
  const double seconds = now() - t0;
  geodl::io::Dataset ds = geodl::io::openRaster(raster);
  const long long bytes_per_pixel =
      ds->GetRasterCount() * GDALGetDataTypeSizeBytes(ds->GetRasterBand(1)->GetRasterDataType());
  std::printf("%lld %lld %.3f\n", (long long)result.splits[0].samples,
              (long long)result.pixels_read * bytes_per_pixel, seconds);
  return 0;
}

struct ChildResult {
  long long samples = 0, bytes = 0;  // bytes of raster read
  double seconds = 0, peak_mib = 0;
};

// Runs this program again as `--run` in a child process; its peak RSS comes from wait4().
ChildResult sampleInChild(const char* self, const std::string& raster, const std::string& vector,
                          const std::string& out, int size, int stride) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe");
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    const std::string s = std::to_string(size), st = std::to_string(stride);
    execl(self, self, "--run", raster.c_str(), vector.c_str(), out.c_str(), s.c_str(), st.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  char buffer[256] = {0};
  const ssize_t n = read(fds[0], buffer, sizeof buffer - 1);
  close(fds[0]);
  int status = 0;
  struct rusage usage {};
  wait4(pid, &status, 0, &usage);
  if (n <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("the sampling child failed");
  ChildResult r;
  std::sscanf(buffer, "%lld %lld %lf", &r.samples, &r.bytes, &r.seconds);
  r.peak_mib = usage.ru_maxrss / 1024.0;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc == 7 && std::strcmp(argv[1], "--run") == 0)
      return runSamples(argv[2], argv[3], argv[4], std::stoi(argv[5]), std::stoi(argv[6]));
    std::string data = "../shared/data/massachusetts";
    std::string work = "/tmp/geodl_bench_samples";
    int large = 20000;
    for (int i = 1; i + 1 < argc; i += 2) {
      if (std::strcmp(argv[i], "--data") == 0) data = argv[i + 1];
      else if (std::strcmp(argv[i], "--work") == 0) work = argv[i + 1];
      else if (std::strcmp(argv[i], "--large") == 0) large = std::stoi(argv[i + 1]);
    }
    fs::create_directories(work);
    const std::string self = fs::canonical("/proc/self/exe").string();

    if (fs::exists(fs::path(data) / "22978945_15.tif")) {
      std::printf("Massachusetts buildings (%s), 256 px samples every 200 px, both images:\n",
                  data.c_str());
      long long samples = 0, bytes = 0;
      double seconds = 0, peak = 0;
      for (const char* image : {"22978945_15.tif", "23429155_15.tif"}) {
        const auto r = sampleInChild(self.c_str(), (fs::path(data) / image).string(),
                                     (fs::path(data) / "massachusetts_buildings.gpkg").string(),
                                     work + "/mass_" + image, 256, 200);
        samples += r.samples;
        bytes += r.bytes;
        seconds += r.seconds;
        peak = std::max(peak, r.peak_mib);
      }
      std::printf("| samples | seconds | samples/s | raster MB read per s | peak RSS MiB |\n"
                  "|---|---|---|---|---|\n| %lld | %.2f | %.1f | %.1f | %.0f |\n\n",
                  samples, seconds, samples / seconds, bytes / 1e6 / seconds, peak);
    } else {
      std::printf("(Massachusetts data not found at %s: skipped)\n\n", data.c_str());
    }

    std::printf("Generated rasters, 3 bands Byte, tiled; 256 px samples every 512 px:\n"
                "| raster | samples | seconds | samples/s | peak RSS MiB |\n|---|---|---|---|---|\n");
    for (int size : {2000, 6000, large}) {
      const std::string raster = work + "/large_" + std::to_string(size) + ".tif";
      const std::string vector = work + "/large_" + std::to_string(size) + ".gpkg";
      if (!fs::exists(raster)) makeLargeScene(raster, vector, size);
      const auto r = sampleInChild(self.c_str(), raster, vector,
                                   work + "/out_" + std::to_string(size), 256, 512);
      std::printf("| %d x %d | %lld | %.1f | %.1f | %.0f |\n", size, size, r.samples, r.seconds,
                  r.samples / r.seconds, r.peak_mib);
      fs::remove_all(work + "/out_" + std::to_string(size));
    }
    return 0;
  } catch (...) {
    std::fprintf(stderr, "bench_samples: %s\n", geodl::describeCurrentException().c_str());
    return 1;
  }
}
