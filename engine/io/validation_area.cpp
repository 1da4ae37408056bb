#include "io/validation_area.h"

#include <ogrsf_frmts.h>

#include "base/errors.h"
#include "io/gdal_util.h"
#include "io/raster.h"

namespace geodl::io {

struct ValidationArea::Impl {
  std::unique_ptr<OGRGeometry> area;
  std::unique_ptr<OGRSpatialReference> srs;
  std::array<double, 6> geotransform{};
};

ValidationArea::ValidationArea(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ValidationArea::ValidationArea(const std::string& path, const std::string& layer_name)
    : impl_(std::make_unique<Impl>()) {
  Dataset ds = openVector(path);
  OGRLayer* layer = layer_name.empty() ? ds->GetLayer(0) : ds->GetLayerByName(layer_name.c_str());
  if (!layer || !layer->GetSpatialRef())
    throw InputError("the validation polygons '" + path + (layer_name.empty() ? "" : "|" + layer_name) +
                     "' are missing or have no CRS");
  impl_->srs = gisSrs(layer->GetSpatialRef());
  checkDegrees(*layer, *impl_->srs, "the validation polygons '" + path + "'");
  OGRGeometryCollection all;
  for (auto& f : *layer)
    if (f->GetGeometryRef()) all.addGeometry(f->GetGeometryRef());
  if (all.IsEmpty()) throw InputError("the validation layer '" + path + "' has no polygon");
  impl_->area.reset(all.UnionCascaded());
  if (!impl_->area) impl_->area.reset(all.clone());
}

ValidationArea::~ValidationArea() = default;
ValidationArea::ValidationArea(ValidationArea&&) noexcept = default;

ValidationArea ValidationArea::onGridOf(const RasterInfo& raster) const {
  auto grid = std::make_unique<Impl>();
  grid->area.reset(impl_->area->clone());
  grid->srs.reset(impl_->srs->Clone());
  OGRSpatialReference rsrs;
  rsrs.importFromWkt(raster.crs_wkt.c_str());
  rsrs.SetAxisMappingStrategy(OAMS_TRADITIONAL_GIS_ORDER);
  if (!impl_->srs->IsSame(&rsrs)) {
    std::unique_ptr<OGRCoordinateTransformation> ct(OGRCreateCoordinateTransformation(impl_->srs.get(), &rsrs));
    if (!ct || grid->area->transform(ct.get()) != OGRERR_NONE)
      throw InputError("cannot reproject the validation polygons into the CRS of '" + raster.path + "'");
  }
  grid->geotransform = raster.geotransform;
  return ValidationArea(std::move(grid));
}

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
