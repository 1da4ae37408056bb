#include "io/parts_vrt.h"

#include <cpl_vsi.h>
#include <ogr_spatialref.h>

#include <filesystem>
#include <iomanip>
#include <regex>
#include <sstream>

#include "base/atomic_file.h"
#include "base/errors.h"
#include "base/file_kind.h"
#include "base/hard_stop.h"
#include "base/markup.h"
#include "base/metadata.h"
#include "io/gdal_util.h"

namespace geodl::io {

namespace fs = std::filesystem;

bool isVrtPath(const std::string& path) { return lowercaseExtension(path) == ".vrt"; }

FileKind rasterOutputKind(const std::string& path) { return isVrtPath(path) ? FileKind::Vrt : FileKind::GeoTiff; }

std::string partsFolderOf(const std::string& vrt) {
  const fs::path path(vrt);
  return (path.parent_path() / (path.stem().string() + "_parts")).string();
}


void checkReplaceableParts(const std::string& vrt, const std::string& role) {
  const std::string parts = partsFolderOf(vrt);
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(parts, ec);
  if (ec || !fs::exists(status)) return;
  if (!fs::is_directory(status))
    throw InputError(role + " '" + vrt + "' keeps its parts in '" + parts +
                     "', which is a file, not GeoDL's folder of parts; move it away or choose another output name");
  static const std::regex own(R"((part|block)-[0-9]+\.tif(\.aux\.xml)?)");
  for (const auto& entry : fs::directory_iterator(parts, ec)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file(ec) || !std::regex_match(name, own))
      throw InputError(role + " '" + vrt + "' keeps its parts in '" + parts + "', which holds '" + name +
                       "', a file GeoDL did not write there; move it away or choose another output name");
  }
}

namespace {

// A part's path as the VRT names it: relative to the VRT's folder when under it.
std::pair<std::string, bool> sourceName(const std::string& vrt, const std::string& part) {
  const fs::path folder = fs::absolute(vrt).parent_path();
  const fs::path relative = fs::absolute(part).lexically_relative(folder);
  if (!relative.empty() && *relative.begin() != "..") return {relative.generic_string(), true};
  return {fs::absolute(part).string(), false};
}

// The VRT's SRS: "EPSG:CODE" where the CRS is EPSG's (the text of a CRS exported from PROJ
// varies within a process, with what PROJ has looked up before, and the VRT's bytes must not),
// else its WKT.
std::string vrtSrs(const std::string& wkt) {
  OGRSpatialReference srs;
  if (srs.importFromWkt(wkt.c_str()) == OGRERR_NONE) {
    const char* authority = srs.GetAuthorityName(nullptr);
    const char* code = srs.GetAuthorityCode(nullptr);
    if (authority && code && std::string(authority) == "EPSG") return "EPSG:" + std::string(code);
  }
  return wkt;
}

void writeText(const std::string& path, const std::string& text, const std::string& what) {
  FileSink sink(path, what);
  sink.write(text.data(), text.size());
  sink.close();
}

}  // namespace

std::string partsVrtXml(const std::string& vrt, const std::vector<VrtPart>& parts, const GeoTiffSpec& spec) {
  std::ostringstream x;
  x << std::setprecision(17);
  x << "<VRTDataset rasterXSize=\"" << spec.width << "\" rasterYSize=\"" << spec.height << "\">\n";
  if (!spec.crs_wkt.empty()) x << "  <SRS>" << escapeMarkup(vrtSrs(spec.crs_wkt)) << "</SRS>\n";
  x << "  <GeoTransform>";
  for (size_t k = 0; k < 6; ++k) x << (k ? ", " : " ") << spec.geotransform[k];
  x << "</GeoTransform>\n";
  x << "  <Metadata>\n    <MDI key=\"GEODL_VERSION\">" << escapeMarkup(metadata::kVersion) << "</MDI>\n  </Metadata>\n";
  const char* type = spec.float32 ? "Float32" : "Byte";
  for (int b = 1; b <= spec.bands; ++b) {
    x << "  <VRTRasterBand dataType=\"" << type << "\" band=\"" << b << "\">\n";
    if (size_t(b - 1) < spec.band_names.size())
      x << "    <Description>" << escapeMarkup(spec.band_names[size_t(b - 1)]) << "</Description>\n";
    if (spec.has_nodata) x << "    <NoDataValue>" << spec.nodata << "</NoDataValue>\n";
    const auto entries = b == 1 && !spec.float32 ? colourTable(spec) : std::vector<std::array<uint8_t, 4>>{};
    if (!entries.empty()) {
      x << "    <ColorInterp>Palette</ColorInterp>\n    <ColorTable>\n";
      for (const auto& e : entries)
        x << "      <Entry c1=\"" << int(e[0]) << "\" c2=\"" << int(e[1]) << "\" c3=\"" << int(e[2]) << "\" c4=\""
          << int(e[3]) << "\"/>\n";
      x << "    </ColorTable>\n";
    }
    if (b == 1 && !spec.categories.empty()) {
      x << "    <CategoryNames>\n";
      for (const auto& name : spec.categories) x << "      <Category>" << escapeMarkup(name) << "</Category>\n";
      x << "    </CategoryNames>\n";
    }
    for (const VrtPart& part : parts) {
      const auto [name, relative] = sourceName(vrt, part.path);
      x << "    <SimpleSource>\n"
        << "      <SourceFilename relativeToVRT=\"" << (relative ? 1 : 0) << "\">" << escapeMarkup(name)
        << "</SourceFilename>\n"
        << "      <SourceBand>" << b << "</SourceBand>\n"
        << "      <SourceProperties RasterXSize=\"" << spec.width << "\" RasterYSize=\"" << part.rows
        << "\" DataType=\"" << type << "\" BlockXSize=\"256\" BlockYSize=\"256\"/>\n"
        << "      <SrcRect xOff=\"0\" yOff=\"0\" xSize=\"" << spec.width << "\" ySize=\"" << part.rows << "\"/>\n"
        << "      <DstRect xOff=\"0\" yOff=\"" << part.y0 << "\" xSize=\"" << spec.width << "\" ySize=\""
        << part.rows << "\"/>\n"
        << "    </SimpleSource>\n";
    }
    x << "  </VRTRasterBand>\n";
  }
  x << "</VRTDataset>\n";
  return x.str();
}

MemoryVrt::MemoryVrt(const std::vector<VrtPart>& parts, const GeoTiffSpec& spec) {
  initGdal();
  std::ostringstream name;
  name << "/vsimem/geodl-parts-" << static_cast<const void*>(this) << ".vrt";
  path_ = name.str();
  const std::string xml = partsVrtXml(path_, parts, spec);
  VSILFILE* f = VSIFOpenL(path_.c_str(), "wb");
  const bool written = f && VSIFWriteL(xml.data(), 1, xml.size(), f) == xml.size();
  if (f) VSIFCloseL(f);
  if (!written) throw IoError("cannot make an in-memory view of the parts of a classification");
}

MemoryVrt::~MemoryVrt() { VSIUnlink(path_.c_str()); }

PartsOutput::PartsOutput(const std::string& vrt, const GeoTiffSpec& spec, const std::string& staging)
    : vrt_(fs::absolute(vrt).string()), parts_(partsFolderOf(vrt_)), staging_(staging), spec_(spec) {}

void PartsOutput::commit(const std::vector<VrtPart>& parts) {
  std::vector<VrtPart> placed;
  for (const VrtPart& part : parts) {
    if (!fs::is_regular_file(part.path))
      throw IoError("the part '" + part.path + "' of '" + vrt_ + "' is missing: a rank did not write it");
    placed.push_back({(fs::path(parts_) / fs::path(part.path).filename()).string(), part.y0, part.rows});
  }
  AtomicOutput vrt(vrt_, ".vrt");
  writeText(vrt.temporary(), partsVrtXml(vrt_, placed, spec_), "'" + vrt_ + "'");
  vrt.finish();
  const hard_stop::CommitScope moving;  // the parts and the VRT over them
  const std::string old = temporaryPathFor(parts_, ".old");
  std::error_code ec;
  const bool had = fs::exists(fs::symlink_status(parts_, ec));
  if (had) {
    fs::rename(parts_, old, ec);
    if (ec) throw IoError("cannot move the previous parts '" + parts_ + "' aside: " + ec.message());
  }
  // On a failure, the previous output as it was (the new parts back in staging, if moved).
  const auto restore = [&](bool moved) {
    std::error_code ignored;
    if (moved) fs::rename(parts_, staging_, ignored);
    if (had) fs::rename(old, parts_, ignored);
  };
  fs::rename(staging_, parts_, ec);
  if (ec) {
    restore(false);
    throw IoError("cannot move the parts into '" + parts_ + "': " + ec.message());
  }
  try {
    vrt.commit();
  } catch (...) {
    restore(true);
    throw;
  }
  if (had) fs::remove_all(old, ec);
}

}  // namespace geodl::io
