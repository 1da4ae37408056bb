#include "io/labels.h"

#include <gdal_alg.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "base/errors.h"
#include "io/gdal_util.h"

namespace geodl::io {

std::string ClassTable::nameOf(int id) const {
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] == id) return names[i];
  return std::to_string(id);
}

namespace {

struct Shape {
  std::unique_ptr<OGRGeometry> geometry;
  OGREnvelope envelope;
  double burn = 0;
  GIntBig fid = 0;
  std::string value;  // the class as written, for string fields
  bool named = false; // a string class, numbered by numberStringClasses()
};

OGRLayer* openLayer(GDALDataset& ds, const LabelSource& source) {
  OGRLayer* layer = source.layer.empty() ? ds.GetLayer(0) : ds.GetLayerByName(source.layer.c_str());
  if (!layer) {
    if (source.layer.empty()) throw InputError("the vector file '" + source.path + "' has no layer");
    std::string names;
    for (int i = 0; i < ds.GetLayerCount(); ++i)
      names += std::string(i ? ", " : "") + ds.GetLayer(i)->GetName();
    throw InputError("the vector file '" + source.path + "' has no layer '" + source.layer +
                     "'; its layers: " + names);
  }
  return layer;
}

int fieldIndex(OGRLayer& layer, const LabelSource& source) {
  OGRFeatureDefn* defn = layer.GetLayerDefn();
  const int index = defn->GetFieldIndex(source.field.c_str());
  if (index < 0) {
    std::string names;
    for (int i = 0; i < defn->GetFieldCount(); ++i)
      names += std::string(i ? ", " : "") + defn->GetFieldDefn(i)->GetNameRef();
    throw InputError("the vector layer '" + std::string(layer.GetName()) + "' of '" + source.path +
                     "' has no field '" + source.field + "'; its fields: " +
                     (names.empty() ? "(none)" : names));
  }
  return index;
}

bool isStringField(OGRLayer& layer, int index) {
  const OGRFieldType t = layer.GetLayerDefn()->GetFieldDefn(index)->GetType();
  return t != OFTInteger && t != OFTInteger64 && t != OFTReal;
}

}  // namespace

struct LabelRasterizer::Impl {
  std::vector<Shape> shapes;  // in burn order
  std::array<double, 6> geotransform{};
  std::string path;
  int ignore_index = 255;
  Dataset window;             // MEM dataset reused for every window of the same size
  int window_w = 0, window_h = 0;
};

LabelRasterizer::LabelRasterizer(const LabelSource& source, const RasterInfo& raster,
                                 int ignore_index)
    : impl_(std::make_unique<Impl>()) {
  impl_->geotransform = raster.geotransform;
  impl_->path = source.path;
  impl_->ignore_index = ignore_index;
  Dataset ds = openVector(source.path);
  OGRLayer* layer = openLayer(*ds, source);
  const bool mask = source.field.empty();  // every polygon is class 1
  const int index = mask ? -1 : fieldIndex(*layer, source);
  const bool strings = !mask && isStringField(*layer, index);
  classes_.string_values = strings;

  // CRSs: both must be known; the vector is reprojected when they differ.
  if (raster.crs_wkt.empty())
    throw InputError("the raster '" + raster.path + "' has no CRS; assign one (for example "
                     "gdal_edit.py -a_srs EPSG:xxxx) so its labels can be placed");
  const OGRSpatialReference* layer_srs = layer->GetSpatialRef();
  if (!layer_srs)
    throw InputError("the vector layer '" + std::string(layer->GetName()) + "' of '" +
                     source.path + "' has no CRS; assign one (ogr2ogr -a_srs EPSG:xxxx)");
  OGRSpatialReference raster_srs;
  raster_srs.importFromWkt(raster.crs_wkt.c_str());
  raster_srs.SetAxisMappingStrategy(OAMS_TRADITIONAL_GIS_ORDER);
  auto vector_srs = gisSrs(layer_srs);
  checkDegrees(*layer, *vector_srs, "the vector layer '" + std::string(layer->GetName()) + "' of '" + source.path + "'");
  std::unique_ptr<OGRCoordinateTransformation> transform;
  if (!vector_srs->IsSame(&raster_srs)) {
    transform.reset(OGRCreateCoordinateTransformation(vector_srs.get(), &raster_srs));
    if (!transform)
      throw InputError(gdalMessage("cannot reproject '" + source.path + "' into the CRS of '" +
                                   raster.path + "'"));
  }

  size_t features = 0, unclassified = 0;
  GIntBig first_unclassified = 0;
  const bool real_field = !mask && !strings && layer->GetLayerDefn()->GetFieldDefn(index)->GetType() == OFTReal;
  layer->ResetReading();
  for (auto& feature : *layer) {
    ++features;
    OGRGeometry* geometry = feature->GetGeometryRef();
    if (!geometry || geometry->IsEmpty()) continue;
    const auto type = wkbFlatten(geometry->getGeometryType());
    if (type != wkbPolygon && type != wkbMultiPolygon && type != wkbCurvePolygon &&
        type != wkbMultiSurface)
      throw InputError("feature " + std::to_string(feature->GetFID()) + " of '" + source.path +
                       "' is a " + OGRGeometryTypeToName(geometry->getGeometryType()) +
                       "; " + (mask ? "a mask" : "ground truth") + " must be polygons or multipolygons");
    if (!mask && !feature->IsFieldSetAndNotNull(index)) {  // no class: not burned
      if (unclassified++ == 0) first_unclassified = feature->GetFID();
      continue;
    }
    const std::string text = mask ? "1" : feature->GetFieldAsString(index);
    int id = 0;  // string classes are numbered below
    const bool ignored = std::find(source.ignored_values.begin(), source.ignored_values.end(),
                                   text) != source.ignored_values.end();
    if (mask) {
      id = 1;
    } else if (ignored) {
      id = ignore_index;
    } else if (!strings) {
      if (real_field) {
        const double real = feature->GetFieldAsDouble(index);
        if (real != std::floor(real))
          throw InputError("feature " + std::to_string(feature->GetFID()) + " of '" + source.path + "' has class " +
                           feature->GetFieldAsString(index) + " in field '" + source.field +
                           "': class ids are whole numbers; round the field's values or use an integer field");
      }
      const GIntBig value = feature->GetFieldAsInteger64(index);
      if (value < 0 || value > 254 || value == ignore_index)
        throw InputError("feature " + std::to_string(feature->GetFID()) + " of '" + source.path +
                         "' has class " + std::to_string(value) + " in field '" + source.field +
                         "'; class ids go from 0 to 254 (declare it ignored if it marks pixels "
                         "to leave out)");
      id = int(value);
    }
    Shape shape;
    if (strings && !ignored) {
      shape.value = text;
      shape.named = true;
    }
    shape.geometry.reset(geometry->clone());
    if (transform && shape.geometry->transform(transform.get()) != OGRERR_NONE)
      throw InputError(gdalMessage("feature " + std::to_string(feature->GetFID()) + " of '" +
                                   source.path + "' cannot be reprojected into the raster's CRS"));
    shape.geometry->getEnvelope(&shape.envelope);
    shape.burn = id;
    shape.fid = feature->GetFID();
    impl_->shapes.push_back(std::move(shape));
  }
  if (features == 0 || impl_->shapes.empty())
    throw InputError("the vector layer '" + std::string(layer->GetName()) + "' of '" +
                     source.path + "' has no polygon" +
                     (mask ? std::string() : " with a class in '" + source.field + "'"));

  if (unclassified > 0)
    warnings_.push_back(std::to_string(unclassified) + " feature" + (unclassified > 1 ? "s" : "") + " of '" + source.path +
                        "' (the first: feature " + std::to_string(first_unclassified) + ") " +
                        (unclassified > 1 ? "have" : "has") + " no class in field '" + source.field +
                        "' (null) and " + (unclassified > 1 ? "are" : "is") +
                        " left out: their pixels take the class of what else covers them, or background; give "
                        "them a class, or a value listed in ignored_values to leave their pixels out of training");

  // Overlap check, in the raster's CRS.
  const auto& gt = raster.geotransform;
  OGREnvelope raster_extent;
  raster_extent.MinX = std::min(gt[0], gt[0] + gt[1] * raster.width + gt[2] * raster.height);
  raster_extent.MaxX = std::max(gt[0], gt[0] + gt[1] * raster.width + gt[2] * raster.height);
  raster_extent.MinY = std::min(gt[3], gt[3] + gt[4] * raster.width + gt[5] * raster.height);
  raster_extent.MaxY = std::max(gt[3], gt[3] + gt[4] * raster.width + gt[5] * raster.height);
  OGREnvelope vector_extent;
  for (const auto& s : impl_->shapes) vector_extent.Merge(s.envelope);
  if (!vector_extent.Intersects(raster_extent))
    throw InputError("the polygons of '" + source.path + "' and the raster '" + raster.path +
                     "' do not overlap: in the raster's CRS the polygons cover " +
                     formatExtent(vector_extent) + " and the raster " +
                     formatExtent(raster_extent));

  if (strings)
    numberStringClasses(stringValues());
  else
    sortAndListClasses({});
}

std::vector<std::string> LabelRasterizer::stringValues() const {
  std::set<std::string> values;
  for (const auto& s : impl_->shapes)
    if (s.named) values.insert(s.value);
  return {values.begin(), values.end()};
}

void checkStringClassCount(size_t count, int ignore_index) {
  const size_t fit = size_t(std::min(254, ignore_index > 0 ? ignore_index - 1 : 254));
  if (count > fit)
    throw InputError("the ground truth has " + std::to_string(count) + " string classes, numbered from 1, but only " +
                     std::to_string(fit) + " fit beside the background (0) and the ignore index (" +
                     std::to_string(ignore_index) + "), in labels of one byte; merge classes, or list the rare ones in "
                     "ignored_values");
}

void LabelRasterizer::numberStringClasses(const std::vector<std::string>& names) {
  checkStringClassCount(names.size(), impl_->ignore_index);
  std::map<std::string, int> ids;
  for (size_t i = 0; i < names.size(); ++i) ids[names[i]] = int(i) + 1;
  for (auto& s : impl_->shapes) {
    if (!s.named) continue;  // ignored
    auto it = ids.find(s.value);
    if (it == ids.end()) {
      std::string all;
      for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
      throw InputError("the class '" + s.value + "' of '" + impl_->path +
                       "' is not in the class list: " + all);
    }
    s.burn = it->second;
  }
  sortAndListClasses(names);
}

void LabelRasterizer::sortAndListClasses(const std::vector<std::string>& names) {
  // Burn order: ascending class id, then feature id; the last burned wins.
  std::stable_sort(impl_->shapes.begin(), impl_->shapes.end(), [](const Shape& a, const Shape& b) {
    return a.burn != b.burn ? a.burn < b.burn : a.fid < b.fid;
  });
  std::set<int> found = {0};
  for (const auto& s : impl_->shapes)
    if (int(s.burn) != impl_->ignore_index) found.insert(int(s.burn));
  classes_.ids.clear();
  classes_.names.clear();
  for (int id : found) {
    classes_.ids.push_back(id);
    if (id == 0)
      classes_.names.push_back("background");
    else if (classes_.string_values)
      classes_.names.push_back(names.at(size_t(id - 1)));
    else
      classes_.names.push_back(std::to_string(id));
  }
}

LabelRasterizer::~LabelRasterizer() = default;

void LabelRasterizer::rasterize(int x, int y, int w, int h, std::vector<uint8_t>& labels) const {
  labels.assign(size_t(w) * h, 0);
  const auto& g = impl_->geotransform;
  // The window's extent, to pick the polygons that can touch it.
  OGREnvelope window;
  for (int cx : {x, x + w}) {
    for (int cy : {y, y + h}) {
      OGREnvelope corner;
      corner.MinX = corner.MaxX = g[0] + cx * g[1] + cy * g[2];
      corner.MinY = corner.MaxY = g[3] + cx * g[4] + cy * g[5];
      window.Merge(corner);
    }
  }
  std::vector<OGRGeometryH> geometries;
  std::vector<double> burns;
  for (const auto& s : impl_->shapes) {
    if (!s.envelope.Intersects(window)) continue;
    geometries.push_back(OGRGeometry::ToHandle(s.geometry.get()));
    burns.push_back(s.burn);
  }
  if (geometries.empty()) return;
  if (!impl_->window || impl_->window_w != w || impl_->window_h != h) {
    GDALDriver* mem = GetGDALDriverManager()->GetDriverByName("MEM");
    impl_->window.reset(mem->Create("", w, h, 1, GDT_Byte, nullptr));
    impl_->window_w = w;
    impl_->window_h = h;
  }
  GDALDataset* ds = impl_->window.get();
  double gt[6] = {g[0] + x * g[1] + y * g[2], g[1], g[2], g[3] + x * g[4] + y * g[5], g[4], g[5]};
  ds->SetGeoTransform(gt);
  GDALRasterBand* band = ds->GetRasterBand(1);
  band->Fill(0);
  int band_list[1] = {1};
  CPLErrorReset();
  if (GDALRasterizeGeometries(GDALDataset::ToHandle(ds), 1, band_list, int(geometries.size()),
                              geometries.data(), nullptr, nullptr, burns.data(), nullptr, nullptr,
                              nullptr) != CE_None)
    throw IoError(gdalMessage("rasterizing the labels failed"));
  if (band->RasterIO(GF_Read, 0, 0, w, h, labels.data(), w, h, GDT_Byte, 0, 0, nullptr) != CE_None)
    throw IoError(gdalMessage("reading rasterized labels failed"));
}

}  // namespace geodl::io
