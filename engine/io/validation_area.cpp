#include "io/validation_area.h"

#include <ogrsf_frmts.h>

#include "base/errors.h"
#include "io/gdal_util.h"
#include "io/raster.h"

namespace geodl::io {

struct ValidationArea::Impl {
  std::unique_ptr<OGRGeometry> area;
  std::array<double, 6> geotransform{};
};

ValidationArea::ValidationArea(const std::string& path, const std::string& layer_name, const RasterInfo& raster)
    : impl_(std::make_unique<Impl>()) {
  Dataset ds = openVector(path);
  OGRLayer* layer = layer_name.empty() ? ds->GetLayer(0) : ds->GetLayerByName(layer_name.c_str());
  if (!layer || !layer->GetSpatialRef())
    throw InputError("the validation polygons '" + path + (layer_name.empty() ? "" : "|" + layer_name) +
                     "' are missing or have no CRS");
  auto srs = gisSrs(layer->GetSpatialRef());
  OGRGeometryCollection all;
  for (auto& f : *layer)
    if (f->GetGeometryRef()) all.addGeometry(f->GetGeometryRef());
  if (all.IsEmpty()) throw InputError("the validation layer '" + path + "' has no polygon");
  impl_->area.reset(all.UnionCascaded());
  if (!impl_->area) impl_->area.reset(all.clone());
  OGRSpatialReference rsrs;
  rsrs.importFromWkt(raster.crs_wkt.c_str());
  rsrs.SetAxisMappingStrategy(OAMS_TRADITIONAL_GIS_ORDER);
  if (!srs->IsSame(&rsrs)) {
    std::unique_ptr<OGRCoordinateTransformation> ct(OGRCreateCoordinateTransformation(srs.get(), &rsrs));
    if (!ct || impl_->area->transform(ct.get()) != OGRERR_NONE)
      throw InputError("cannot reproject the validation polygons into the CRS of '" + raster.path + "'");
  }
  impl_->geotransform = raster.geotransform;
}

ValidationArea::~ValidationArea() = default;
ValidationArea::ValidationArea(ValidationArea&&) noexcept = default;

ValidationArea::Place ValidationArea::place(int x, int y, int size) const {
  const auto& g = impl_->geotransform;
  OGRLinearRing ring;
  const std::pair<int, int> corners[] = {{0, 0}, {size, 0}, {size, size}, {0, size}, {0, 0}};
  for (auto [c, r] : corners)
    ring.addPoint(g[0] + (x + c) * g[1] + (y + r) * g[2], g[3] + (x + c) * g[4] + (y + r) * g[5]);
  OGRPolygon rect;
  rect.addRing(&ring);
  if (rect.Within(impl_->area.get())) return Place::Inside;
  return rect.Intersects(impl_->area.get()) ? Place::Straddles : Place::Outside;
}

}  // namespace geodl::io
