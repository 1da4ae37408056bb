#include "io/resampled.h"

#include <gdal_utils.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <unistd.h>

#include <cpl_vsi.h>

#include "io/gdal_util.h"

namespace geodl::io {

namespace {

std::string viewPath(const std::string& input) {
  static std::atomic<int> next{0};
  std::string name = std::filesystem::path(input).filename().string();
  if (name.empty()) name = "raster";
  return "/vsimem/geodl-resampled/" + std::to_string(getpid()) + "-" + std::to_string(next++) + "/" + name + ".vrt";
}

}  // namespace

ResampledView::ResampledView(const std::string& path, int width, int height) : path_(viewPath(path)) {
  // The VRT names its source: a file by its absolute path (the VRT lives elsewhere), a GDAL
  // path (/vsizip/..., NETCDF:...) as given.
  std::error_code ignored;
  const std::string source_name =
      std::filesystem::exists(path, ignored) ? std::filesystem::absolute(path, ignored).string() : path;
  Dataset source = openRaster(source_name);
  const bool coarser = double(width) * height < double(source->GetRasterXSize()) * source->GetRasterYSize();
  method_ = coarser ? "average" : "bilinear";
  const std::string w = std::to_string(width), h = std::to_string(height);
  const char* args[] = {"-of", "VRT", "-outsize", w.c_str(), h.c_str(), "-r", method_, nullptr};
  GDALTranslateOptions* options = GDALTranslateOptionsNew(const_cast<char**>(args), nullptr);
  int usage_error = 0;
  CPLErrorReset();
  GDALDatasetH view = GDALTranslate(path_.c_str(), GDALDataset::ToHandle(source.get()), options, &usage_error);
  GDALTranslateOptionsFree(options);
  if (!view)
    throw IoError(gdalMessage("cannot resample '" + path + "' to " + w + " x " + h + " pixels"));
  GDALClose(view);  // the VRT is written now
}

ResampledView::~ResampledView() {
  VSIUnlink(path_.c_str());
  VSIRmdir(std::filesystem::path(path_).parent_path().string().c_str());
}

GridCounts copyToGrid(const std::string& classes, const std::string& probabilities, const RasterReader& input,
                      TileSink& sink, const std::function<void(int)>& step) {
  const ProbabilityType type = sink.probabilities();
  Dataset ids_ds = openRaster(classes);
  Dataset probs_ds = type != ProbabilityType::None ? openRaster(probabilities) : nullptr;
  const int vw = ids_ds->GetRasterXSize(), vh = ids_ds->GetRasterYSize();
  const int width = input.info().width, height = input.info().height, bands = input.info().bands;
  const int classes_n = probs_ds ? probs_ds->GetRasterCount() : 0;
  const bool finer = double(width) * height >= double(vw) * vh;
  const GDALDataType gdal_type = type == ProbabilityType::Float32 ? GDT_Float32 : GDT_Byte;
  const size_t value_size = type == ProbabilityType::Float32 ? 4 : 1;
  // Strips of at most 256 rows and 16 M input values (the nodata check reads every band).
  const int strip = std::clamp(int((int64_t(1) << 24) / (int64_t(width) * bands)), 1, 256);
  GridCounts counts;
  std::vector<uint8_t> ids, probs, valid;
  std::vector<double> values;
  const auto read = [&](GDALDataset& ds, const std::string& path, int y, int n, GDALRIOResampleAlg alg,
                        GDALDataType buffer_type, void* buffer) {
    GDALRasterIOExtraArg arg;
    INIT_RASTERIO_EXTRA_ARG(arg);
    arg.eResampleAlg = alg;
    arg.bFloatingPointWindowValidity = TRUE;
    arg.dfXOff = 0;
    arg.dfXSize = vw;
    arg.dfYOff = double(y) * vh / height;
    arg.dfYSize = double(n) * vh / height;
    const int y0 = std::clamp(int(std::floor(arg.dfYOff)), 0, vh - 1);
    const int y1 = std::clamp(int(std::ceil(arg.dfYOff + arg.dfYSize - 1e-9)), y0 + 1, vh);
    if (ds.RasterIO(GF_Read, 0, y0, vw, y1 - y0, buffer, width, n, buffer_type, ds.GetRasterCount(), nullptr, 0, 0,
                    0, &arg) != CE_None)
      throw IoError(gdalMessage("cannot read the classified rows of '" + path + "' (computed at the model's "
                                "pixel size)"));
  };
  for (int y = 0; y < height; y += strip) {
    const int n = std::min(strip, height - y);
    const size_t pixels = size_t(n) * width;
    ids.resize(pixels);
    read(*ids_ds, classes, y, n, finer ? GRIORA_NearestNeighbour : GRIORA_Mode, GDT_Byte, ids.data());
    if (probs_ds) {
      probs.resize(size_t(classes_n) * pixels * value_size);
      read(*probs_ds, probabilities, y, n, finer ? GRIORA_Bilinear : GRIORA_Average, gdal_type, probs.data());
    }
    input.read(0, y, width, n, values, valid);
    for (size_t p = 0; p < pixels; ++p) {
      if (!valid[p]) {
        ids[p] = 255;
        for (int c = 0; c < classes_n; ++c)
          std::fill_n(probs.data() + (size_t(c) * pixels + p) * value_size, value_size, uint8_t(0));
      }
      ++counts.id_pixels[ids[p]];
    }
    sink.writeRows(y, n, ids.data(), probs_ds ? probs.data() : nullptr);
    if (step) step(y + n);
  }
  return counts;
}

}  // namespace geodl::io
