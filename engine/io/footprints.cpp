#include "io/footprints.h"

#include <cerrno>
#include <cstdio>
#include <filesystem>

#include "base/atomic_file.h"
#include "base/errors.h"
#include "io/gdal_util.h"

namespace geodl::io {

struct FootprintWriter::Impl {
  AtomicOutput out;  // first: destroyed after the dataset closes
  Dataset ds;
  OGRLayer* layer = nullptr;
  std::vector<int> class_ids;
  bool in_transaction = false;
};

FootprintWriter::FootprintWriter(const std::string& path, const std::string& crs_wkt,
                                 const std::vector<int>& class_ids)
    : impl_(std::make_unique<Impl>()), path_(path) {
  initGdal();
  impl_->class_ids = class_ids;
  // The extension must stay .gpkg for the driver.
  impl_->out = AtomicOutput(path, ".gpkg");
  std::filesystem::create_directories(std::filesystem::absolute(path).parent_path());
  GDALDriver* driver = GetGDALDriverManager()->GetDriverByName("GPKG");
  CPLErrorReset();
  errno = 0;
  impl_->ds.reset(driver->Create(impl_->out.temporary().c_str(), 0, 0, 0, GDT_Unknown, nullptr));
  if (!impl_->ds) throw gdalWriteFailure("the footprint layer '" + path + "'", path);
  markWrittenByGeoDL(*impl_->ds);
  OGRSpatialReference srs;
  OGRSpatialReference* srs_ptr = nullptr;
  if (!crs_wkt.empty() && srs.importFromWkt(crs_wkt.c_str()) == OGRERR_NONE) srs_ptr = &srs;
  impl_->layer = impl_->ds->CreateLayer("samples", srs_ptr, wkbPolygon, nullptr);
  if (!impl_->layer) throw gdalWriteFailure("the footprint layer '" + path + "'", path);
  auto addField = [&](const char* name, OGRFieldType type) {
    OGRFieldDefn field(name, type);
    if (impl_->layer->CreateField(&field) != OGRERR_NONE)
      throw gdalWriteFailure("the field " + std::string(name) + " of the footprint layer '" + path + "'", path);
  };
  addField("split", OFTString);
  addField("sample", OFTInteger64);
  addField("source", OFTString);
  addField("col", OFTInteger);
  addField("row", OFTInteger);
  for (int id : class_ids) addField(("class_" + std::to_string(id)).c_str(), OFTInteger64);
  impl_->in_transaction = impl_->ds->StartTransaction() == OGRERR_NONE;
}

FootprintWriter::~FootprintWriter() {
  impl_->ds.reset();  // closed before the temporary file goes
}

void FootprintWriter::add(const std::string& split, int64_t index, const std::string& source,
                          const std::array<int, 4>& window, const std::array<double, 6>& g,
                          const std::vector<int64_t>& class_pixels) {
  OGRFeature feature(impl_->layer->GetLayerDefn());
  feature.SetField("split", split.c_str());
  feature.SetField("sample", GIntBig(index));
  feature.SetField("source", source.c_str());
  feature.SetField("col", window[0]);
  feature.SetField("row", window[1]);
  for (size_t i = 0; i < impl_->class_ids.size() && i < class_pixels.size(); ++i)
    feature.SetField(("class_" + std::to_string(impl_->class_ids[i])).c_str(),
                     GIntBig(class_pixels[i]));
  OGRLinearRing ring;
  const int w = window[2], h = window[3];
  const std::pair<int, int> corners[] = {{0, 0}, {w, 0}, {w, h}, {0, h}, {0, 0}};
  for (auto [c, r] : corners)
    ring.addPoint(g[0] + c * g[1] + r * g[2], g[3] + c * g[4] + r * g[5]);
  OGRPolygon polygon;
  polygon.addRing(&ring);
  feature.SetGeometry(&polygon);
  CPLErrorReset();
  errno = 0;
  if (impl_->layer->CreateFeature(&feature) != OGRERR_NONE)
    throw gdalWriteFailure("the footprint layer '" + path_ + "'", path_);
}

void FootprintWriter::finish() {
  const std::string what = "the footprint layer '" + path_ + "'";
  CPLErrorReset();
  errno = 0;
  if (impl_->in_transaction && impl_->ds->CommitTransaction() != OGRERR_NONE) throw gdalWriteFailure(what, path_);
  impl_->in_transaction = false;
  closeWritten(impl_->ds, what, path_);
  impl_->out.finish();
}

void FootprintWriter::commit() {
  if (impl_->ds) finish();
  impl_->out.commit();
}

}  // namespace geodl::io
