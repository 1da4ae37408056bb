#include "io/polygonize.h"

#include <gdal_alg.h>

#include <cerrno>
#include <cstdio>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>

#include "base/atomic_file.h"
#include "base/errors.h"
#include "io/gdal_util.h"

namespace geodl::io {

namespace fs = std::filesystem;

namespace {

// A new GeoPackage at `path` (for `what`, the destination `gpkg` in messages) with one layer of
// polygons, `fields` (name, type) and GeoDL's mark.
struct PolygonFile {
  Dataset ds;
  OGRLayer* layer = nullptr;
};
PolygonFile createPolygonFile(const std::string& path, const char* layer_name, const OGRSpatialReference* srs,
                              const std::vector<std::pair<const char*, OGRFieldType>>& fields,
                              const std::string& what, const std::string& gpkg) {
  std::remove(path.c_str());
  GDALDriver* driver = GetGDALDriverManager()->GetDriverByName("GPKG");
  CPLErrorReset();
  errno = 0;
  PolygonFile file;
  file.ds.reset(driver->Create(path.c_str(), 0, 0, 0, GDT_Unknown, nullptr));
  if (!file.ds) throw gdalWriteFailure(what, gpkg);
  markWrittenByGeoDL(*file.ds);
  file.layer = file.ds->CreateLayer(layer_name, const_cast<OGRSpatialReference*>(srs), wkbPolygon, nullptr);  // 3.6 API
  if (!file.layer) throw gdalWriteFailure(what, gpkg);
  for (const auto& [name, type] : fields) {
    OGRFieldDefn field(name, type);
    if (file.layer->CreateField(&field) != OGRERR_NONE) throw gdalWriteFailure(what, gpkg);
  }
  return file;
}

// The polygons of band 1 of `source` (nodata left out), field class_id, in a Memory layer.
Dataset rawPolygons(GDALDataset& source, const std::string& raster) {
  GDALRasterBand* band = source.GetRasterBand(1);
  GDALDriver* memory = GetGDALDriverManager()->GetDriverByName("Memory");
  Dataset scratch(memory->Create("", 0, 0, 0, GDT_Unknown, nullptr));
  OGRLayer* raw = scratch->CreateLayer("raw", const_cast<OGRSpatialReference*>(source.GetSpatialRef()), wkbPolygon,
                                       nullptr);
  OGRFieldDefn value("class_id", OFTInteger);
  raw->CreateField(&value);
  if (GDALPolygonize(band, band->GetMaskBand(), raw, 0, nullptr, nullptr, nullptr) != CE_None)
    throw IoError(gdalMessage("polygonizing '" + raster + "' failed"));
  return scratch;
}

// The "classes" layer of the polygon file: each polygon with its class name and area, unless
// under the minimum area.
class ClassPolygonWriter {
 public:
  ClassPolygonWriter(const std::string& temp, const OGRSpatialReference* srs, const std::vector<std::string>& names,
                     double min_area, const std::string& gpkg)
      : names_(names), min_area_(min_area), gpkg_(gpkg), what_("the polygon file '" + gpkg + "'") {
    file_ = createPolygonFile(temp, "classes",  srs,
                              {{"class_id", OFTInteger}, {"class_name", OFTString}, {"area", OFTReal}}, what_, gpkg);
    CPLErrorReset();
    errno = 0;
    if (file_.layer->StartTransaction() != OGRERR_NONE) throw gdalWriteFailure(what_, gpkg_);
  }
  void add(const OGRGeometry* geometry, int cls) {
    const double a = geometry ? geometry->toPolygon()->get_Area() : 0.0;
    if (a < min_area_) {
      ++result_.dropped;
      return;
    }
    OGRFeature f(file_.layer->GetLayerDefn());
    f.SetField(0, cls);
    f.SetField(1, cls >= 0 && size_t(cls) < names_.size() ? names_[size_t(cls)].c_str() : "");
    f.SetField(2, a);
    f.SetGeometry(geometry);
    if (file_.layer->CreateFeature(&f) != OGRERR_NONE) {
      IoError failure = gdalWriteFailure(what_, gpkg_);
      (void)file_.layer->RollbackTransaction();  // the file is removed anyway
      throw failure;
    }
    ++result_.polygons;
  }
  PolygonizeResult close() {
    if (file_.layer->CommitTransaction() != OGRERR_NONE) throw gdalWriteFailure(what_, gpkg_);
    closeWritten(file_.ds, what_, gpkg_);
    return result_;
  }

 private:
  PolygonFile file_;
  const std::vector<std::string>& names_;
  double min_area_;
  std::string gpkg_, what_;
  PolygonizeResult result_;
};

}  // namespace

PolygonizeResult polygonizeClasses(const std::string& raster, AtomicOutput& output,
                                   const std::vector<std::string>& names, double min_area) {
  initGdal();
  Dataset source = openRaster(raster);
  PolygonizeResult result;
  {
    ClassPolygonWriter writer(output.temporary(), source->GetSpatialRef(), names, min_area, output.path());
    // Polygonize into memory first, then keep the polygons large enough.
    Dataset scratch = rawPolygons(*source, raster);
    OGRLayer* raw = scratch->GetLayer(0);
    raw->ResetReading();
    for (auto& feature : *raw) writer.add(feature->GetGeometryRef(), feature->GetFieldAsInteger(0));
    result = writer.close();
  }
  output.finish();
  return result;
}

void polygonizePart(const std::string& raster, const std::string& gpkg) {
  initGdal();
  Dataset source = openRaster(raster);
  const std::string what = "the polygons of the part '" + raster + "'";
  Dataset scratch = rawPolygons(*source, raster);
  PolygonFile file = createPolygonFile(gpkg, "part", source->GetSpatialRef(), {{"class_id", OFTInteger}}, what, gpkg);
  CPLErrorReset();
  errno = 0;
  if (file.layer->StartTransaction() != OGRERR_NONE) throw gdalWriteFailure(what, gpkg);
  for (auto& feature : *scratch->GetLayer(0)) {
    OGRFeature f(file.layer->GetLayerDefn());
    f.SetField(0, feature->GetFieldAsInteger(0));
    f.SetGeometry(feature->GetGeometryRef());
    if (file.layer->CreateFeature(&f) != OGRERR_NONE) throw gdalWriteFailure(what, gpkg);
  }
  if (file.layer->CommitTransaction() != OGRERR_NONE) throw gdalWriteFailure(what, gpkg);
  closeWritten(file.ds, what, gpkg);
}

namespace {

// A polygon of a part that reaches one of the part's borders.
struct BorderPolygon {
  size_t part = 0;
  GIntBig fid = 0;
  int cls = 0;
  std::unique_ptr<OGRGeometry> geometry;
  OGREnvelope box;
};

// Union-find over the border polygons.
size_t root(std::vector<size_t>& up, size_t i) {
  while (up[i] != i) i = up[i] = up[up[i]];
  return i;
}

// Whether two polygons meet along an edge (a shared length), not only at a corner.
bool shareAnEdge(const BorderPolygon& a, const BorderPolygon& b) {
  std::unique_ptr<OGRGeometry> common(a.geometry->Intersection(b.geometry.get()));
  if (!common || common->IsEmpty()) return false;
  const OGRwkbGeometryType type = wkbFlatten(common->getGeometryType());
  if (type == wkbLineString || type == wkbMultiLineString) return true;
  if (type == wkbGeometryCollection) {
    for (const OGRGeometry* part : *common->toGeometryCollection()) {
      const OGRwkbGeometryType t = wkbFlatten(part->getGeometryType());
      if (t == wkbLineString || t == wkbMultiLineString || t == wkbPolygon) return true;
    }
  }
  return type == wkbPolygon || type == wkbMultiPolygon;
}

}  // namespace

PolygonizeResult mergePartPolygons(const std::vector<std::string>& parts, const std::vector<double>& borders,
                                   double tolerance, AtomicOutput& output, const std::vector<std::string>& names,
                                   double min_area) {
  initGdal();
  const std::string& gpkg = output.path();
  std::vector<Dataset> files;
  for (const auto& part : parts) {
    files.emplace_back(GDALDataset::Open(part.c_str(), GDAL_OF_VECTOR | GDAL_OF_READONLY));
    if (!files.back() || !files.back()->GetLayer(0))
      throw IoError(gdalMessage("cannot read the polygons of a part, '" + part + "'"));
  }
  // The polygons that reach a border between two parts, by border: those above it (the part
  // before) and below it (the part after).
  std::vector<BorderPolygon> border;
  std::vector<std::pair<std::vector<size_t>, std::vector<size_t>>> at(borders.size());
  std::map<std::pair<size_t, GIntBig>, size_t> index;
  for (size_t p = 0; p < files.size(); ++p) {
    OGRLayer* layer = files[p]->GetLayer(0);
    layer->ResetReading();
    for (auto& feature : *layer) {
      OGREnvelope box;
      feature->GetGeometryRef()->getEnvelope(&box);
      const bool bottom = p < borders.size() && std::abs(box.MinY - borders[p]) <= tolerance;
      const bool top = p > 0 && std::abs(box.MaxY - borders[p - 1]) <= tolerance;
      if (!bottom && !top) continue;
      const size_t i = border.size();
      border.push_back({p, feature->GetFID(), feature->GetFieldAsInteger(0),
                        std::unique_ptr<OGRGeometry>(feature->GetGeometryRef()->clone()), box});
      index[{p, feature->GetFID()}] = i;
      if (bottom) at[p].first.push_back(i);
      if (top) at[p - 1].second.push_back(i);
    }
  }
  // Same-class polygons that meet along a border are one: a sweep over x on each border.
  std::vector<size_t> up(border.size());
  for (size_t i = 0; i < up.size(); ++i) up[i] = i;
  for (auto& [above, below] : at) {
    const auto by_x = [&](size_t a, size_t b) { return border[a].box.MinX < border[b].box.MinX; };
    std::sort(above.begin(), above.end(), by_x);
    std::sort(below.begin(), below.end(), by_x);
    size_t first = 0;  // the first polygon below that may still overlap in x
    for (size_t a : above) {
      while (first < below.size() && border[below[first]].box.MaxX <= border[a].box.MinX) ++first;
      for (size_t k = first; k < below.size() && border[below[k]].box.MinX < border[a].box.MaxX; ++k) {
        const size_t b = below[k];
        if (border[b].cls != border[a].cls || border[b].box.MaxX <= border[a].box.MinX) continue;
        if (root(up, a) != root(up, b) && shareAnEdge(border[a], border[b])) up[root(up, a)] = root(up, b);
      }
    }
  }
  std::map<size_t, std::vector<size_t>> groups;
  for (size_t i = 0; i < border.size(); ++i) groups[root(up, i)].push_back(i);
  PolygonizeResult result;
  {
    ClassPolygonWriter writer(output.temporary(), files.front()->GetLayer(0)->GetSpatialRef(), names, min_area, gpkg);
    // In the parts' order; a merged polygon where its first piece was.
    for (size_t p = 0; p < files.size(); ++p) {
      OGRLayer* layer = files[p]->GetLayer(0);
      layer->ResetReading();
      for (auto& feature : *layer) {
        const auto found = index.find({p, feature->GetFID()});
        if (found == index.end()) {
          writer.add(feature->GetGeometryRef(), feature->GetFieldAsInteger(0));
          continue;
        }
        const std::vector<size_t>& group = groups[root(up, found->second)];
        if (group.front() != found->second) continue;  // written with its first piece
        if (group.size() == 1) {
          writer.add(border[group.front()].geometry.get(), border[group.front()].cls);
          continue;
        }
        OGRMultiPolygon pieces;
        for (size_t i : group) pieces.addGeometry(border[i].geometry.get());
        std::unique_ptr<OGRGeometry> merged(pieces.UnionCascaded());
        if (!merged) throw IoError(gdalMessage("cannot merge the polygons along the parts' borders"));
        if (wkbFlatten(merged->getGeometryType()) == wkbPolygon) {
          writer.add(merged.get(), border[group.front()].cls);
        } else {  // pieces that met only through others: each on its own
          for (const OGRGeometry* piece : *merged->toGeometryCollection()) writer.add(piece, border[group.front()].cls);
        }
      }
    }
    result = writer.close();
  }
  output.finish();
  return result;
}

PolygonizeResult polygonizeClasses(const std::string& raster, const std::string& gpkg,
                                   const std::vector<std::string>& names, double min_area) {
  // Removes the temporary file on any failure.
  AtomicOutput output(gpkg, ".gpkg");
  const PolygonizeResult result = polygonizeClasses(raster, output, names, min_area);
  output.commit();
  return result;
}

}  // namespace geodl::io
