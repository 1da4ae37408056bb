#include "io/geotiff_writer.h"

#include <gdal_utils.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>

#include "base/atomic_file.h"
#include "base/errors.h"
#include "base/hard_stop.h"
#include "io/gdal_util.h"

namespace geodl::io {

namespace fs = std::filesystem;

// Tiles are 256 x 256; rows are handed to GDAL a whole row of tiles at a time, so that each
// tile is compressed and written once, in order: the file's layout does not depend on how
// the rows came (a rank's blocks or one process's) nor on what else fills GDAL's cache.
constexpr int kTile = 256;

struct GeoTiffWriter::Impl {
  AtomicOutput out;  // first: destroyed after the dataset closes
  GeoTiffSpec spec;
  Dataset ds;
  bool committed = false;
  // The rows of the tile row being filled: bands x kTile x width values.
  std::vector<uint8_t> pending;
  int pending_y = 0, pending_rows = 0;
};

std::vector<std::array<uint8_t, 4>> colourTable(const GeoTiffSpec& spec) {
  std::vector<std::array<uint8_t, 4>> table;
  for (size_t v = 0; v < spec.colours.size(); ++v) {
    const std::string& text = spec.colours[v];
    unsigned r = 0, g = 0, b = 0;
    if (text.size() != 7 || text[0] != '#' || std::sscanf(text.c_str() + 1, "%02x%02x%02x", &r, &g, &b) != 3)
      continue;
    table.resize(v + 1, {0, 0, 0, 0});
    table[v] = {uint8_t(r), uint8_t(g), uint8_t(b), 255};
  }
  return table;
}

GeoTiffWriter::GeoTiffWriter(const std::string& path, const GeoTiffSpec& spec)
    : impl_(std::make_unique<Impl>()), path_(path) {
  initGdal();
  auto& d = *impl_;
  d.spec = spec;
  d.out = AtomicOutput(path, ".tif");
  GDALDriver* driver = GetGDALDriverManager()->GetDriverByName("GTiff");
  char** options = nullptr;
  options = CSLSetNameValue(options, "TILED", "YES");
  options = CSLSetNameValue(options, "BLOCKXSIZE", std::to_string(kTile).c_str());
  options = CSLSetNameValue(options, "BLOCKYSIZE", std::to_string(kTile).c_str());
  options = CSLSetNameValue(options, "COMPRESS", "DEFLATE");
  options = CSLSetNameValue(options, "PREDICTOR", spec.float32 ? "3" : "2");
  if (spec.scratch) options = CSLSetNameValue(options, "ZLEVEL", "1");
  options = CSLSetNameValue(options, "BIGTIFF", "IF_SAFER");
  if (spec.bands > 1) options = CSLSetNameValue(options, "INTERLEAVE", "BAND");
  CPLErrorReset();
  errno = 0;
  d.ds.reset(driver->Create(d.out.temporary().c_str(), spec.width, spec.height, spec.bands,
                            spec.float32 ? GDT_Float32 : GDT_Byte, options));
  CSLDestroy(options);
  if (!d.ds) throw gdalWriteFailure("'" + path + "'", path);
  markWrittenByGeoDL(*d.ds);
  std::array<double, 6> gt = spec.geotransform;
  d.ds->SetGeoTransform(gt.data());
  if (!spec.crs_wkt.empty()) d.ds->SetProjection(spec.crs_wkt.c_str());
  for (int b = 1; b <= spec.bands; ++b) {
    GDALRasterBand* band = d.ds->GetRasterBand(b);
    if (spec.has_nodata) band->SetNoDataValue(spec.nodata);
    if (size_t(b - 1) < spec.band_names.size())
      band->SetDescription(spec.band_names[size_t(b - 1)].c_str());
  }
  GDALRasterBand* first = d.ds->GetRasterBand(1);
  if (!spec.float32 && !spec.colours.empty()) {
    GDALColorTable table;
    const auto entries = colourTable(spec);
    for (size_t v = 0; v < entries.size(); ++v) {
      const GDALColorEntry entry{entries[v][0], entries[v][1], entries[v][2], entries[v][3]};
      table.SetColorEntry(int(v), &entry);
    }
    first->SetColorTable(&table);
    first->SetColorInterpretation(GCI_PaletteIndex);
  }
  if (!spec.categories.empty()) {
    char** names = nullptr;
    for (const auto& n : spec.categories) names = CSLAddString(names, n.c_str());
    first->SetCategoryNames(names);
    CSLDestroy(names);
  }
}

GeoTiffWriter::~GeoTiffWriter() {
  if (impl_->committed) return;
  impl_->ds.reset();  // closed before the temporary file goes
  for (const std::string& file : {impl_->out.temporary(), impl_->out.finished()})
    std::remove((file + ".aux.xml").c_str());
}

namespace {

// Hands the pending rows (the whole tile row, or the raster's last rows) to GDAL.
void flushPending(GeoTiffWriter::Impl& d, GDALDataType type, const std::string& path) {
  if (d.pending_rows == 0) return;
  const size_t value = size_t(GDALGetDataTypeSizeBytes(type));
  const size_t plane = size_t(kTile) * d.spec.width * value;
  CPLErrorReset();
  errno = 0;
  for (int b = 0; b < d.spec.bands; ++b)
    if (d.ds->GetRasterBand(b + 1)->RasterIO(GF_Write, 0, d.pending_y, d.spec.width, d.pending_rows,
                                             d.pending.data() + b * plane, d.spec.width, d.pending_rows, type,
                                             0, 0, nullptr) != CE_None)
      throw gdalWriteFailure("'" + path + "'", path);
  // The row's tiles written now, band by band: their order in the file is then the same
  // whatever else the process reads (GDAL's block cache, shared by every dataset, would
  // otherwise write them when it evicts them), so that a resumed or assembled output has
  // the bytes of one written in one go.
  for (int b = 0; b < d.spec.bands; ++b)
    if (d.ds->GetRasterBand(b + 1)->FlushCache() != CE_None) throw gdalWriteFailure("'" + path + "'", path);
  d.pending_y += d.pending_rows;
  d.pending_rows = 0;
}

template <typename T>
void write(GeoTiffWriter::Impl& d, int y, int rows, const T* values, GDALDataType type, const std::string& path) {
  if (y != d.pending_y + d.pending_rows)
    throw Error("rows " + std::to_string(y) + "+ of '" + path + "' came out of order: a bug");
  const GeoTiffSpec& spec = d.spec;
  const size_t in_plane = size_t(rows) * spec.width, row = size_t(spec.width);
  d.pending.resize(size_t(spec.bands) * kTile * row * sizeof(T));
  T* pending = reinterpret_cast<T*>(d.pending.data());
  for (int done = 0; done < rows;) {
    const int tile_end = std::min(spec.height, (d.pending_y / kTile + 1) * kTile);
    const int n = std::min(rows - done, tile_end - (d.pending_y + d.pending_rows));
    for (int b = 0; b < spec.bands; ++b)
      std::copy(values + b * in_plane + size_t(done) * row, values + b * in_plane + size_t(done + n) * row,
                pending + (size_t(b) * kTile + size_t(d.pending_rows)) * row);
    d.pending_rows += n;
    done += n;
    if (d.pending_y + d.pending_rows == tile_end) flushPending(d, type, path);
  }
}

}  // namespace

void GeoTiffWriter::writeRows(int y, int rows, const uint8_t* values) {
  write(*impl_, y, rows, values, GDT_Byte, path_);
}

void GeoTiffWriter::writeRows(int y, int rows, const float* values) {
  write(*impl_, y, rows, values, GDT_Float32, path_);
}

void GeoTiffWriter::finish() {
  auto& d = *impl_;
  const std::string what = "'" + path_ + "'";
  flushPending(d, d.spec.float32 ? GDT_Float32 : GDT_Byte, path_);
  CPLErrorReset();
  errno = 0;
  d.ds->FlushCache();
  if (CPLGetLastErrorType() >= CE_Failure) throw gdalWriteFailure(what, path_);
  std::string finished = d.out.temporary();
  if (d.spec.cog) {
    // The COG driver copies the tiled file, adding overviews (nearest for classes).
    const std::string cog = d.out.temporary() + ".cog.tif";
    char** argv = nullptr;
    for (const char* a : {"-of", "COG", "-co", "COMPRESS=DEFLATE", "-co", "BIGTIFF=IF_SAFER",
                          "-co", d.spec.float32 ? "RESAMPLING=AVERAGE" : "RESAMPLING=NEAREST"})
      argv = CSLAddString(argv, a);
    GDALTranslateOptions* options = GDALTranslateOptionsNew(argv, nullptr);
    CSLDestroy(argv);
    int failed = 0;
    Dataset out(GDALDataset::FromHandle(GDALTranslate(cog.c_str(), GDALDataset::ToHandle(d.ds.get()), options, &failed)));
    GDALTranslateOptionsFree(options);
    try {
      if (!out || failed) throw gdalWriteFailure("the Cloud Optimized GeoTIFF " + what, path_);
      closeWritten(out, "the Cloud Optimized GeoTIFF " + what, path_);
    } catch (...) {
      out.reset();
      std::remove(cog.c_str());
      std::remove((cog + ".aux.xml").c_str());
      throw;
    }
    d.ds.reset();
    std::remove((d.out.temporary() + ".aux.xml").c_str());  // the temporary itself goes at commit
    finished = cog;
  } else {
    closeWritten(d.ds, what, path_);
  }
  d.out.finish(finished);
}

const std::string& GeoTiffWriter::finishedPath() const { return impl_->out.finished(); }

void GeoTiffWriter::commit() {
  auto& d = *impl_;
  if (d.ds) finish();
  const hard_stop::CommitScope moving;  // the raster and its sidecar
  const std::string finished = d.out.finished();
  d.out.commit();
  // The sidecar (category names): the new one, or none where the old file had one.
  std::error_code ec;
  if (fs::exists(finished + ".aux.xml")) {
    fs::rename(finished + ".aux.xml", path_ + ".aux.xml", ec);
    if (ec) fs::remove(finished + ".aux.xml", ec);  // never left behind (the jobs check the name fits)
  } else {
    fs::remove(path_ + ".aux.xml", ec);
  }
  d.committed = true;
}

}  // namespace geodl::io
