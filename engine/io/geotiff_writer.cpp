#include "io/geotiff_writer.h"

#include <gdal_utils.h>
#include <tiffio.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "base/atomic_file.h"
#include "base/errors.h"
#include "base/hard_stop.h"
#include "io/gdal_util.h"

namespace geodl::io {

namespace fs = std::filesystem;

// Tiles are 256 pixels wide and spec.tile_rows high; rows are compressed a whole row of tiles
// at a time, band after band, so that each tile is written once, in order: the file's
// layout does not depend on how the rows came (a rank's blocks, a resumed run's, or one
// process's).
constexpr int kTileWidth = 256;

namespace {

// A libtiff handle whose errors and warnings are kept (for the exception), not printed.
class TiffFile {
 public:
  TiffFile() = default;
  // mode: "r" or "r+"; get() is null when the file does not open (error() says why).
  TiffFile(const std::string& path, const char* mode) : messages_(std::make_unique<Messages>()) {
    messages_->path = path;
    TIFFOpenOptions* options = TIFFOpenOptionsAlloc();
    TIFFOpenOptionsSetErrorHandlerExtR(options, &TiffFile::keep, messages_.get());
    TIFFOpenOptionsSetWarningHandlerExtR(options, &TiffFile::ignore, nullptr);
    tif_ = TIFFOpenExt(path.c_str(), mode, options);
    TIFFOpenOptionsFree(options);
  }
  ~TiffFile() { close(); }
  TiffFile(TiffFile&& other) noexcept : tif_(other.tif_), messages_(std::move(other.messages_)) { other.tif_ = nullptr; }
  TiffFile& operator=(TiffFile&& other) noexcept {
    close();
    tif_ = other.tif_;
    messages_ = std::move(other.messages_);
    other.tif_ = nullptr;
    return *this;
  }
  TIFF* get() const { return tif_; }
  std::string error() const { return messages_ ? messages_->last : ""; }
  // Writes what is left (the tile offsets, the directory); false on failure.
  bool flush() { return tif_ && TIFFFlush(tif_) == 1; }
  void close() {
    if (tif_) TIFFClose(tif_);
    tif_ = nullptr;
  }
  uint32_t field(ttag_t tag) const {
    uint32_t v = 0;
    TIFFGetField(tif_, tag, &v);
    return v;
  }
  uint16_t shortField(ttag_t tag) const {
    uint16_t v = 0;
    TIFFGetFieldDefaulted(tif_, tag, &v);
    return v;
  }

 private:
  struct Messages {
    std::string path, last;
  };
  static int keep(TIFF*, void* messages, const char* module, const char* format, va_list args) {
    char text[1024];
    std::vsnprintf(text, sizeof text, format, args);
    auto& m = *static_cast<Messages*>(messages);
    // The module is often the file's name, which the message names already.
    const bool named = module && *module && module != m.path;
    m.last = (named ? std::string(module) + ": " : std::string()) + text;
    return 1;
  }
  static int ignore(TIFF*, void*, const char*, const char*, va_list) { return 1; }

  TIFF* tif_ = nullptr;
  std::unique_ptr<Messages> messages_;  // the last error (its address is libtiff's)
};

}  // namespace

struct GeoTiffWriter::Impl {
  AtomicOutput out;  // first: destroyed after the file closes
  GeoTiffSpec spec;
  TiffFile tif;      // the temporary, open for update until finish()
  bool finished = false, committed = false;
  // The rows of the tile row being filled: bands x tile_rows x width values.
  std::vector<uint8_t> pending;
  int pending_y = 0, pending_rows = 0;
  std::vector<uint8_t> tile;  // one tile, compressed or not

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  // Unless committed (or when the constructor failed): the file closed, its sidecar removed;
  // `out` then removes the file.
  ~Impl() {
    if (committed) return;
    tif.close();
    for (const std::string& file : {out.temporary(), out.finished()})
      if (!file.empty()) std::remove((file + ".aux.xml").c_str());
  }

  size_t valueSize() const { return spec.float32 ? 4 : 1; }
  size_t tileBytes() const { return size_t(kTileWidth) * size_t(spec.tile_rows) * valueSize(); }
  // The failure to write the file, with the fix.
  IoError failure(const std::string& path) const {
    return writeFailure("'" + path + "'", path, errno, tif.error());
  }
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
  if (spec.tile_rows <= 0 || spec.tile_rows % 16 != 0)
    throw Error("a GeoTIFF's tiles of " + std::to_string(spec.tile_rows) + " rows: not a multiple of 16, a bug");
  d.out = AtomicOutput(path, ".tif");
  GDALDriver* driver = GetGDALDriverManager()->GetDriverByName("GTiff");
  char** options = nullptr;
  options = CSLSetNameValue(options, "TILED", "YES");
  options = CSLSetNameValue(options, "BLOCKXSIZE", std::to_string(kTileWidth).c_str());
  options = CSLSetNameValue(options, "BLOCKYSIZE", std::to_string(spec.tile_rows).c_str());
  options = CSLSetNameValue(options, "COMPRESS", "DEFLATE");
  options = CSLSetNameValue(options, "PREDICTOR", spec.float32 ? "3" : "2");
  options = CSLSetNameValue(options, "BIGTIFF", "IF_SAFER");
  options = CSLSetNameValue(options, "SPARSE_OK", "TRUE");  // no tile yet: libtiff writes them
  if (spec.bands > 1) options = CSLSetNameValue(options, "INTERLEAVE", "BAND");
  CPLErrorReset();
  errno = 0;
  Dataset ds(driver->Create(d.out.temporary().c_str(), spec.width, spec.height, spec.bands,
                            spec.float32 ? GDT_Float32 : GDT_Byte, options));
  CSLDestroy(options);
  if (!ds) throw gdalWriteFailure("'" + path + "'", path);
  markWrittenByGeoDL(*ds);
  std::array<double, 6> gt = spec.geotransform;
  ds->SetGeoTransform(gt.data());
  if (!spec.crs_wkt.empty()) ds->SetProjection(spec.crs_wkt.c_str());
  for (int b = 1; b <= spec.bands; ++b) {
    GDALRasterBand* band = ds->GetRasterBand(b);
    if (spec.has_nodata) band->SetNoDataValue(spec.nodata);
    if (size_t(b - 1) < spec.band_names.size())
      band->SetDescription(spec.band_names[size_t(b - 1)].c_str());
  }
  GDALRasterBand* first = ds->GetRasterBand(1);
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
  closeWritten(ds, "'" + path + "'", path);  // the directory, every tile empty; the sidecar
  errno = 0;
  d.tif = TiffFile(d.out.temporary(), "r+");
  if (!d.tif.get()) throw d.failure(path);
  TIFFSetField(d.tif.get(), TIFFTAG_ZIPQUALITY, 6);  // GDAL's default level
}

GeoTiffWriter::~GeoTiffWriter() = default;

namespace {

// Compresses the pending rows (the whole tile row, or the raster's last rows) into the file:
// each band's tiles from left to right, the parts past the raster's edges zero.
void flushPending(GeoTiffWriter::Impl& d, const std::string& path) {
  if (d.pending_rows == 0) return;
  const GeoTiffSpec& spec = d.spec;
  const size_t value = d.valueSize(), row = size_t(spec.width) * value;
  const size_t plane = size_t(spec.tile_rows) * row, tile_row = size_t(kTileWidth) * value;
  TIFF* tif = d.tif.get();
  errno = 0;
  for (int b = 0; b < spec.bands; ++b)
    for (int x0 = 0; x0 < spec.width; x0 += kTileWidth) {
      const size_t n = size_t(std::min(kTileWidth, spec.width - x0)) * value;
      d.tile.assign(d.tileBytes(), 0);
      for (int r = 0; r < d.pending_rows; ++r)
        std::memcpy(d.tile.data() + size_t(r) * tile_row, d.pending.data() + b * plane + size_t(r) * row + x0 * value, n);
      if (TIFFWriteEncodedTile(tif, TIFFComputeTile(tif, uint32_t(x0), uint32_t(d.pending_y), 0, uint16_t(b)),
                               d.tile.data(), tmsize_t(d.tile.size())) < 0)
        throw d.failure(path);
    }
  d.pending_y += d.pending_rows;
  d.pending_rows = 0;
}

void checkOrder(const GeoTiffWriter::Impl& d, int y, const std::string& path) {
  if (y != d.pending_y + d.pending_rows || d.finished)
    throw Error("rows " + std::to_string(y) + "+ of '" + path + "' came out of order: a bug");
}

// Rows [y, y + rows) of every band (bands x rows x width values of `value` bytes).
void write(GeoTiffWriter::Impl& d, int y, int rows, const uint8_t* values, const std::string& path) {
  checkOrder(d, y, path);
  const GeoTiffSpec& spec = d.spec;
  const size_t row = size_t(spec.width) * d.valueSize(), in_plane = size_t(rows) * row;
  const int tile_rows = spec.tile_rows;
  d.pending.resize(size_t(spec.bands) * size_t(tile_rows) * row);
  for (int done = 0; done < rows;) {
    const int tile_end = std::min(spec.height, (d.pending_y / tile_rows + 1) * tile_rows);
    const int n = std::min(rows - done, tile_end - (d.pending_y + d.pending_rows));
    for (int b = 0; b < spec.bands; ++b)
      std::memcpy(d.pending.data() + (size_t(b) * tile_rows + size_t(d.pending_rows)) * row,
                  values + b * in_plane + size_t(done) * row, size_t(n) * row);
    d.pending_rows += n;
    done += n;
    if (d.pending_y + d.pending_rows == tile_end) flushPending(d, path);
  }
}

}  // namespace

void GeoTiffWriter::writeRows(int y, int rows, const uint8_t* values) {
  if (impl_->spec.float32) throw Error("Byte rows given to the Float32 raster '" + path_ + "': a bug");
  write(*impl_, y, rows, values, path_);
}

void GeoTiffWriter::writeRows(int y, int rows, const float* values) {
  if (!impl_->spec.float32) throw Error("Float32 rows given to the Byte raster '" + path_ + "': a bug");
  write(*impl_, y, rows, reinterpret_cast<const uint8_t*>(values), path_);
}

void GeoTiffWriter::appendFile(const std::string& file, int y, int rows) {
  auto& d = *impl_;
  checkOrder(d, y, path_);
  const GeoTiffSpec& spec = d.spec;
  const std::string named = "'" + file + "'";
  TiffFile src(file, "r");
  if (!src.get()) throw RasterReadError("cannot read " + named + ": " + src.error());
  // Written by a GeoTiffWriter for these rows: the same tiles, bands, type and compression.
  TIFF* in = src.get();
  TIFF* out = d.tif.get();
  for (ttag_t tag : {TIFFTAG_TILEWIDTH, TIFFTAG_TILELENGTH, TIFFTAG_IMAGEWIDTH})
    if (src.field(tag) != d.tif.field(tag) || !TIFFIsTiled(in))
      throw RasterReadError(named + " is not a block of '" + path_ + "' (its width or tiles differ): another job wrote over it");
  if (int(src.field(TIFFTAG_IMAGELENGTH)) != rows)
    throw RasterReadError(named + " has " + std::to_string(src.field(TIFFTAG_IMAGELENGTH)) + " rows, not the " +
                          std::to_string(rows) + " of its block: another job wrote over it");
  for (ttag_t tag : {TIFFTAG_SAMPLESPERPIXEL, TIFFTAG_BITSPERSAMPLE, TIFFTAG_SAMPLEFORMAT, TIFFTAG_COMPRESSION,
                     TIFFTAG_PREDICTOR, TIFFTAG_PLANARCONFIG})
    if (src.shortField(tag) != d.tif.shortField(tag))
      throw RasterReadError(named + " is not a block of '" + path_ + "' (its bands, type or compression differ): "
                            "another job wrote over it");
  const int tile_rows = spec.tile_rows;
  const size_t value = d.valueSize(), row = size_t(spec.width) * value, tile_row = size_t(kTileWidth) * value;
  std::vector<uint8_t> rows_read;
  for (int j = 0; j * tile_rows < rows; ++j) {
    const int ys = y + j * tile_rows, h = std::min(tile_rows, rows - j * tile_rows);
    // The same rows as one of this file's rows of tiles: copied as they are.
    const bool same = d.pending_rows == 0 && ys % tile_rows == 0 && (h == tile_rows || ys + h == spec.height);
    if (!same) rows_read.resize(size_t(spec.bands) * size_t(h) * row);
    for (int b = 0; b < spec.bands; ++b)
      for (int x0 = 0; x0 < spec.width; x0 += kTileWidth) {
        const uint32_t from = TIFFComputeTile(in, uint32_t(x0), uint32_t(j * tile_rows), 0, uint16_t(b));
        if (same) {
          const uint64_t bytes = TIFFGetStrileByteCount(in, from);
          d.tile.resize(size_t(bytes));
          if (bytes == 0 || TIFFReadRawTile(in, from, d.tile.data(), tmsize_t(bytes)) != tmsize_t(bytes))
            throw RasterReadError("cannot read " + named + ": " + (bytes ? src.error() : "a tile is missing"));
          errno = 0;
          if (TIFFWriteRawTile(out, TIFFComputeTile(out, uint32_t(x0), uint32_t(ys), 0, uint16_t(b)), d.tile.data(),
                               tmsize_t(bytes)) != tmsize_t(bytes))
            throw d.failure(path_);
          continue;
        }
        d.tile.resize(d.tileBytes());
        if (TIFFReadEncodedTile(in, from, d.tile.data(), tmsize_t(d.tile.size())) < 0)
          throw RasterReadError("cannot read " + named + ": " + src.error());
        const size_t n = size_t(std::min(kTileWidth, spec.width - x0)) * value;
        for (int r = 0; r < h; ++r)
          std::memcpy(rows_read.data() + (size_t(b) * h + size_t(r)) * row + x0 * value,
                      d.tile.data() + size_t(r) * tile_row, n);
      }
    if (same)
      d.pending_y += h;
    else
      write(d, ys, h, rows_read.data(), path_);
  }
}

void GeoTiffWriter::finish() {
  auto& d = *impl_;
  if (d.finished) return;
  const std::string what = "'" + path_ + "'";
  flushPending(d, path_);
  if (d.pending_y != d.spec.height)
    throw Error(what + " finished at row " + std::to_string(d.pending_y) + " of " + std::to_string(d.spec.height) +
                ": a bug");
  errno = 0;
  if (!d.tif.flush()) throw d.failure(path_);
  d.tif.close();
  d.finished = true;
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
    Dataset tiled = openRaster(d.out.temporary());
    CPLErrorReset();
    errno = 0;
    Dataset out(GDALDataset::FromHandle(GDALTranslate(cog.c_str(), GDALDataset::ToHandle(tiled.get()), options, &failed)));
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
    tiled.reset();
    std::remove((d.out.temporary() + ".aux.xml").c_str());  // the temporary itself goes at commit
    finished = cog;
  }
  d.out.finish(finished);
}

const std::string& GeoTiffWriter::finishedPath() const { return impl_->out.finished(); }

void GeoTiffWriter::commit() {
  auto& d = *impl_;
  finish();
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
