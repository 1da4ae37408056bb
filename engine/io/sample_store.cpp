#include "io/sample_store.h"

#include <hdf5.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>

#include "base/atomic_file.h"
#include "base/digest.h"
#include "base/errors.h"
#include "base/file_kind.h"

namespace geodl::io {

namespace {

void initHdf5() {
  static std::once_flag once;
  std::call_once(once, [] {
    // HDF5's exit handler closes the files still open, and crashes on one whose close failed
    // (a full disk): GeoDL closes its files itself, so the handler is turned off (before the
    // library starts; too late if something else started it, and then harmless).
    H5dont_atexit();
    // Errors come back as return codes and become IoErrors; no printing to stderr.
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  });
}

template <typename T>
void convertPixels(const std::vector<double>& values, std::vector<unsigned char>& bytes) {
  bytes.resize(values.size() * sizeof(T));
  T* out = reinterpret_cast<T*>(bytes.data());
  for (size_t i = 0; i < values.size(); ++i) {
    if constexpr (std::is_integral_v<T>)
      out[i] = T(std::clamp(values[i], double(std::numeric_limits<T>::lowest()), double(std::numeric_limits<T>::max())));
    else
      out[i] = T(values[i]);
  }
}

// A GDAL pixel type as a store keeps it: its type in the file, the same in memory (a
// little-endian file on a little-endian machine: the bytes the datasets' digests cover),
// and the conversion of a sample's values into those bytes. Resolved once per store.
struct PixelType {
  hid_t file, memory;
  void (*convert)(const std::vector<double>&, std::vector<unsigned char>&);
};
PixelType pixelType(const std::string& data_type) {
  if (data_type == "Byte") return {H5T_STD_U8LE, H5T_NATIVE_UINT8, convertPixels<uint8_t>};
  if (data_type == "UInt16") return {H5T_STD_U16LE, H5T_NATIVE_UINT16, convertPixels<uint16_t>};
  if (data_type == "Int16") return {H5T_STD_I16LE, H5T_NATIVE_INT16, convertPixels<int16_t>};
  if (data_type == "UInt32") return {H5T_STD_U32LE, H5T_NATIVE_UINT32, convertPixels<uint32_t>};
  if (data_type == "Int32") return {H5T_STD_I32LE, H5T_NATIVE_INT32, convertPixels<int32_t>};
  if (data_type == "Float32") return {H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, convertPixels<float>};
  if (data_type == "Float64") return {H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, convertPixels<double>};
  throw InputError("pixels of type " + data_type + " cannot be stored");
}

// The attribute on each dataset that holds the digest of its bytes (FNV-1a, in row order).
constexpr const char* kDigestAttribute = "geodl_digest";
constexpr const char* kDigestedDatasets[] = {"sat_img", "map_img", "sample_window", "sample_geotransform",
                                             "sample_source"};

// An HDF5 identifier closed by the right function.
class Id {
 public:
  Id() = default;
  Id(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Id(Id&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  Id& operator=(Id&& o) noexcept {
    reset();
    id_ = o.id_;
    close_ = o.close_;
    o.id_ = -1;
    return *this;
  }
  ~Id() { reset(); }
  void reset() { close(); }
  // Closes now and reports whether closing succeeded.
  bool close() {
    const herr_t status = id_ >= 0 && close_ ? close_(id_) : 0;
    id_ = -1;
    return status >= 0;
  }
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_ = -1;
  herr_t (*close_)(hid_t) = nullptr;
};

void check(herr_t status, const std::string& what) {
  if (status < 0) throw IoError(what);
}

// A failed write to the store at `path`: errno still holds the system's reason.
void checkWrite(herr_t status, const std::string& path) {
  if (status < 0) throw writeFailure("the sample store '" + path + "'", path, errno);
}

Id createDataset(hid_t file, const char* name, hid_t type, std::vector<hsize_t> item_dims,
                 const std::string& path) {
  std::vector<hsize_t> dims = {0}, max = {H5S_UNLIMITED}, chunk = {1};
  for (hsize_t d : item_dims) {
    dims.push_back(d);
    max.push_back(d);
    chunk.push_back(d);
  }
  // Small per-sample metadata rows are chunked by many samples at a time.
  if (item_dims.size() <= 1) chunk[0] = 256;
  Id space(H5Screate_simple(int(dims.size()), dims.data(), max.data()), H5Sclose);
  Id dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  H5Pset_chunk(dcpl.get(), int(chunk.size()), chunk.data());
  Id ds(H5Dcreate2(file, name, type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT), H5Dclose);
  if (!ds.ok()) throw writeFailure(std::string("the dataset ") + name + " of a sample store", path, errno);
  return ds;
}

// Writes `count` rows starting at row `at` of a dataset whose first dimension is the sample.
void writeRows(hid_t ds, hsize_t at, const void* data, hid_t mem_type, const std::string& path) {
  Id file_space(H5Dget_space(ds), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(file_space.get());
  std::vector<hsize_t> dims(rank), start(rank, 0), count(rank);
  H5Sget_simple_extent_dims(file_space.get(), dims.data(), nullptr);
  start[0] = at;
  count = dims;
  count[0] = 1;
  // (The message is made only on failure: this runs five times per sample.)
  if (H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr) < 0)
    throw IoError("cannot select a sample in '" + path + "'");
  Id mem_space(H5Screate_simple(rank, count.data(), nullptr), H5Sclose);
  errno = 0;
  checkWrite(H5Dwrite(ds, mem_type, mem_space.get(), file_space.get(), H5P_DEFAULT, data), path);
}

void setExtent(hid_t ds, hsize_t rows, const std::string& path) {
  Id space(H5Dget_space(ds), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  std::vector<hsize_t> dims(rank);
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  dims[0] = rows;
  errno = 0;
  checkWrite(H5Dset_extent(ds, dims.data()), path);
}

template <typename T>
void writeArrayAttribute(hid_t obj, const char* name, const std::vector<T>& values, hid_t file_type,
                         hid_t mem_type) {
  hsize_t n = values.size();
  Id space(n ? H5Screate_simple(1, &n, nullptr) : H5Screate(H5S_NULL), H5Sclose);
  Id attr(H5Acreate2(obj, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (n) check(H5Awrite(attr.get(), mem_type, values.data()), std::string("attribute ") + name);
}

void writeIntAttribute(hid_t obj, const char* name, int64_t value) {
  Id space(H5Screate(H5S_SCALAR), H5Sclose);
  Id attr(H5Acreate2(obj, name, H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  check(H5Awrite(attr.get(), H5T_NATIVE_INT64, &value), std::string("attribute ") + name);
}

Id stringType() {
  Id type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  return type;
}

void writeStringAttribute(hid_t obj, const char* name, const std::string& value) {
  Id type = stringType();
  Id space(H5Screate(H5S_SCALAR), H5Sclose);
  Id attr(H5Acreate2(obj, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  const char* p = value.c_str();
  check(H5Awrite(attr.get(), type.get(), &p), std::string("attribute ") + name);
}

void writeStringsAttribute(hid_t obj, const char* name, const std::vector<std::string>& values) {
  Id type = stringType();
  hsize_t n = values.size();
  Id space(n ? H5Screate_simple(1, &n, nullptr) : H5Screate(H5S_NULL), H5Sclose);
  Id attr(H5Acreate2(obj, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  std::vector<const char*> pointers;
  for (const auto& v : values) pointers.push_back(v.c_str());
  if (n) check(H5Awrite(attr.get(), type.get(), pointers.data()), std::string("attribute ") + name);
}

bool hasAttribute(hid_t obj, const char* name) { return H5Aexists(obj, name) > 0; }

size_t attributeLength(hid_t attr) {
  Id space(H5Aget_space(attr), H5Sclose);
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  return n < 0 ? 0 : size_t(n);
}

template <typename T>
std::vector<T> readArrayAttribute(hid_t obj, const char* name, hid_t mem_type) {
  if (!hasAttribute(obj, name)) return {};
  Id attr(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  std::vector<T> values(attributeLength(attr.get()));
  if (!values.empty()) H5Aread(attr.get(), mem_type, values.data());
  return values;
}

int64_t readIntAttribute(hid_t obj, const char* name) {
  auto v = readArrayAttribute<int64_t>(obj, name, H5T_NATIVE_INT64);
  return v.empty() ? 0 : v[0];
}

std::vector<std::string> readStringsAttribute(hid_t obj, const char* name) {
  if (!hasAttribute(obj, name)) return {};
  Id attr(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  Id type = stringType();
  std::vector<char*> pointers(attributeLength(attr.get()));
  if (pointers.empty()) return {};
  H5Aread(attr.get(), type.get(), pointers.data());
  std::vector<std::string> values(pointers.begin(), pointers.end());
  Id space(H5Aget_space(attr.get()), H5Sclose);
  H5Dvlen_reclaim(type.get(), space.get(), H5P_DEFAULT, pointers.data());
  return values;
}

std::string readStringAttribute(hid_t obj, const char* name) {
  auto v = readStringsAttribute(obj, name);
  return v.empty() ? std::string() : v[0];
}

Id openStore(const std::string& path) {
  initHdf5();
  const FileKind kind = fileKind(path);
  if (kind != FileKind::Hdf5)
    throw IoError(kind == FileKind::Missing ? "cannot read the sample store '" + path + "': check the path"
                                            : "'" + path + "' is " + describeFileKind(kind) +
                                                  ", not a sample store (HDF5); give one `geodl samples` wrote");
  Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.ok())
    throw IoError("'" + path + "' starts like an HDF5 file but cannot be opened: it is damaged or truncated (" +
                  std::to_string(fileSize(path)) + " bytes); create the store again with `geodl samples`");
  if (H5Lexists(file.get(), "sat_img", H5P_DEFAULT) <= 0 ||
      H5Lexists(file.get(), "map_img", H5P_DEFAULT) <= 0)
    throw InputError("'" + path + "' is not a sample store: it has no sat_img and map_img");
  return file;
}

}  // namespace

struct SampleStoreWriter::Impl {
  AtomicOutput out;  // first: destroyed after the file closes
  Id file, sat, map, window, geotransform, source;
  PixelType pixel_type{};
  std::vector<unsigned char> pixels;  // one sample in the stored type
  uint64_t digests[5] = {kDigestStart, kDigestStart, kDigestStart, kDigestStart, kDigestStart};  // kDigestedDatasets
  int64_t size = 0, capacity = 0;
  bool finished = false, committed = false;
};

SampleStoreWriter::SampleStoreWriter(const std::string& path, int sample_size, int bands,
                                     const std::string& data_type)
    : impl_(std::make_unique<Impl>()), path_(path) {
  initHdf5();
  impl_->out = AtomicOutput(path);
  errno = 0;
  impl_->file = Id(H5Fcreate(impl_->out.temporary().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                   H5Fclose);
  if (!impl_->file.ok())
    throw writeFailure("the sample store '" + path + "'", path, errno, "its folder is missing or cannot be written");
  const hid_t f = impl_->file.get();
  impl_->pixel_type = pixelType(data_type);
  const hsize_t s = hsize_t(sample_size), b = hsize_t(bands);
  impl_->sat = createDataset(f, "sat_img", impl_->pixel_type.file, {s, s, b}, path);
  impl_->map = createDataset(f, "map_img", H5T_STD_U8LE, {s, s}, path);
  impl_->window = createDataset(f, "sample_window", H5T_STD_I32LE, {4}, path);
  impl_->geotransform = createDataset(f, "sample_geotransform", H5T_IEEE_F64LE, {6}, path);
  impl_->source = createDataset(f, "sample_source", H5T_STD_I32LE, {}, path);
}

SampleStoreWriter::~SampleStoreWriter() {
  if (!impl_->committed) {
    impl_->sat.reset();
    impl_->map.reset();
    impl_->window.reset();
    impl_->geotransform.reset();
    impl_->source.reset();
    impl_->file.reset();  // closed before the temporary file goes
  }
}

int64_t SampleStoreWriter::size() const { return impl_->size; }

void SampleStoreWriter::append(const std::vector<double>& image, const std::vector<uint8_t>& labels,
                               const std::array<int, 4>& window,
                               const std::array<double, 6>& geotransform, int source_index) {
  auto& d = *impl_;
  if (d.size == d.capacity) {
    d.capacity = std::max<int64_t>(64, d.capacity * 2);
    for (const Id* ds : {&d.sat, &d.map, &d.window, &d.geotransform, &d.source})
      setExtent(ds->get(), hsize_t(d.capacity), path_);
  }
  d.pixel_type.convert(image, d.pixels);
  const int32_t window32[4] = {window[0], window[1], window[2], window[3]};
  const int32_t source32 = source_index;
  writeRows(d.sat.get(), hsize_t(d.size), d.pixels.data(), d.pixel_type.memory, path_);
  writeRows(d.map.get(), hsize_t(d.size), labels.data(), H5T_NATIVE_UINT8, path_);
  writeRows(d.window.get(), hsize_t(d.size), window32, H5T_NATIVE_INT32, path_);
  writeRows(d.geotransform.get(), hsize_t(d.size), geotransform.data(), H5T_NATIVE_DOUBLE, path_);
  writeRows(d.source.get(), hsize_t(d.size), &source32, H5T_NATIVE_INT32, path_);
  addToDigest(d.digests[0], d.pixels.data(), d.pixels.size());
  addToDigest(d.digests[1], labels.data(), labels.size());
  addToDigest(d.digests[2], window32, sizeof window32);
  addToDigest(d.digests[3], geotransform.data(), sizeof(double) * geotransform.size());
  addToDigest(d.digests[4], &source32, sizeof source32);
  ++d.size;
}

void SampleStoreWriter::finish(const StoreMetadata& m) {
  auto& d = *impl_;
  for (const Id* ds : {&d.sat, &d.map, &d.window, &d.geotransform, &d.source})
    setExtent(ds->get(), hsize_t(d.size), path_);
  const hid_t f = d.file.get();
  writeStringAttribute(f, "geodl_version", m.engine_version);
  writeStringAttribute(f, "split", m.split);
  writeIntAttribute(f, "sample_size", m.sample_size);
  writeIntAttribute(f, "bands", m.bands);
  writeStringAttribute(f, "data_type", m.data_type);
  writeIntAttribute(f, "num_classes", m.num_classes);
  writeIntAttribute(f, "ignore_index", m.ignore_index);
  writeArrayAttribute(f, "class_ids", m.class_ids, H5T_STD_I32LE, H5T_NATIVE_INT);
  writeStringsAttribute(f, "class_names", m.class_names);
  writeArrayAttribute(f, "class_pixel_counts", m.class_pixel_counts, H5T_STD_I64LE,
                      H5T_NATIVE_INT64);
  writeArrayAttribute(f, "band_mean", m.band_mean, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE);
  writeArrayAttribute(f, "band_std", m.band_std, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE);
  writeArrayAttribute(f, "band_min", m.band_min, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE);
  writeArrayAttribute(f, "band_max", m.band_max, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE);
  writeArrayAttribute(f, "wavelengths", m.wavelengths, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE);
  writeStringsAttribute(f, "sources", m.sources);
  writeStringsAttribute(f, "source_crs_wkt", m.source_crs_wkt);
  writeStringAttribute(f, "crs_wkt", m.crs_wkt);
  const Id* datasets[] = {&d.sat, &d.map, &d.window, &d.geotransform, &d.source};
  for (size_t i = 0; i < 5; ++i) writeStringAttribute(datasets[i]->get(), kDigestAttribute, digestText(d.digests[i]));
  d.sat.reset();
  d.map.reset();
  d.window.reset();
  d.geotransform.reset();
  d.source.reset();
  errno = 0;
  if (!d.file.close()) throw writeFailure("the sample store '" + path_ + "'", path_, errno);
  d.out.finish();
  d.finished = true;
}

void SampleStoreWriter::commit() {
  if (!impl_->finished) throw IoError("the sample store '" + path_ + "' was committed before it was finished");
  impl_->out.commit();
  impl_->committed = true;
}

StoreContents readStoreMetadata(const std::string& path) {
  Id file = openStore(path);
  const hid_t f = file.get();
  StoreContents c;
  auto& m = c.metadata;
  m.engine_version = readStringAttribute(f, "geodl_version");
  m.split = readStringAttribute(f, "split");
  m.sample_size = int(readIntAttribute(f, "sample_size"));
  m.bands = int(readIntAttribute(f, "bands"));
  m.data_type = readStringAttribute(f, "data_type");
  m.num_classes = int(readIntAttribute(f, "num_classes"));
  // geo-deep-learning's stores have no attributes: 255 is their "no label" value too.
  m.ignore_index = hasAttribute(f, "ignore_index") ? int(readIntAttribute(f, "ignore_index")) : 255;
  m.class_ids = readArrayAttribute<int>(f, "class_ids", H5T_NATIVE_INT);
  m.class_names = readStringsAttribute(f, "class_names");
  m.class_pixel_counts = readArrayAttribute<int64_t>(f, "class_pixel_counts", H5T_NATIVE_INT64);
  m.band_mean = readArrayAttribute<double>(f, "band_mean", H5T_NATIVE_DOUBLE);
  m.band_std = readArrayAttribute<double>(f, "band_std", H5T_NATIVE_DOUBLE);
  m.band_min = readArrayAttribute<double>(f, "band_min", H5T_NATIVE_DOUBLE);
  m.band_max = readArrayAttribute<double>(f, "band_max", H5T_NATIVE_DOUBLE);
  m.wavelengths = readArrayAttribute<double>(f, "wavelengths", H5T_NATIVE_DOUBLE);
  m.sources = readStringsAttribute(f, "sources");
  m.source_crs_wkt = readStringsAttribute(f, "source_crs_wkt");
  m.crs_wkt = readStringAttribute(f, "crs_wkt");
  Id sat(H5Dopen2(f, "sat_img", H5P_DEFAULT), H5Dclose);
  Id space(H5Dget_space(sat.get()), H5Sclose);
  hsize_t dims[4] = {0, 0, 0, 0};
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  c.samples = int64_t(dims[0]);
  if (m.sample_size == 0) m.sample_size = int(dims[1]);  // a geo-deep-learning store
  if (m.bands == 0) m.bands = int(dims[3]);
  return c;
}

namespace {
// Reads row `index` of a dataset whose first dimension is the sample.
void readRow(hid_t ds, int64_t index, void* out, hid_t mem_type, const std::string& path) {
  Id space(H5Dget_space(ds), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  std::vector<hsize_t> dims(rank), start(rank, 0);
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  if (index < 0 || hsize_t(index) >= dims[0])
    throw InputError("sample " + std::to_string(index) + " is not in '" + path + "' (it has " +
                     std::to_string(dims[0]) + ")");
  start[0] = hsize_t(index);
  dims[0] = 1;
  check(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start.data(), nullptr, dims.data(),
                            nullptr),
        "reading '" + path + "' failed");
  Id mem(H5Screate_simple(rank, dims.data(), nullptr), H5Sclose);
  check(H5Dread(ds, mem_type, mem.get(), space.get(), H5P_DEFAULT, out),
        "reading '" + path + "' failed");
}
}  // namespace

struct SampleStoreReader::Impl {
  Id file, sat, map;
};

SampleStoreReader::SampleStoreReader(const std::string& path)
    : impl_(std::make_unique<Impl>()), path_(path) {
  impl_->file = openStore(path);
  impl_->sat = Id(H5Dopen2(impl_->file.get(), "sat_img", H5P_DEFAULT), H5Dclose);
  impl_->map = Id(H5Dopen2(impl_->file.get(), "map_img", H5P_DEFAULT), H5Dclose);
  Id space(H5Dget_space(impl_->sat.get()), H5Sclose);
  if (H5Sget_simple_extent_ndims(space.get()) != 4)
    throw InputError("'" + path + "' is not a sample store: sat_img is not N x S x S x B");
  hsize_t dims[4];
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  size_ = int64_t(dims[0]);
  sample_size_ = int(dims[1]);
  bands_ = int(dims[3]);
  if (dims[1] != dims[2])
    throw InputError("'" + path + "' holds samples that are not square");
}

SampleStoreReader::~SampleStoreReader() = default;

void SampleStoreReader::read(int64_t index, float* image, uint8_t* labels) const {
  readRow(impl_->sat.get(), index, image, H5T_NATIVE_FLOAT, path_);
  readRow(impl_->map.get(), index, labels, H5T_NATIVE_UINT8, path_);
}

std::array<double, 6> readSampleGeotransform(const std::string& path, int64_t index) {
  std::array<double, 6> geotransform{0, 0, 0, 0, 0, 0};
  Id file = openStore(path);
  if (H5Lexists(file.get(), "sample_geotransform", H5P_DEFAULT) <= 0) return geotransform;
  Id ds(H5Dopen2(file.get(), "sample_geotransform", H5P_DEFAULT), H5Dclose);
  readRow(ds.get(), index, geotransform.data(), H5T_NATIVE_DOUBLE, path);
  return geotransform;
}

std::vector<std::string> verifyStore(const std::string& path, const std::function<void()>& between_reads) {
  Id file = openStore(path);
  size_t digested = 0;
  std::vector<unsigned char> buffer;
  for (const char* name : kDigestedDatasets) {
    if (H5Lexists(file.get(), name, H5P_DEFAULT) <= 0) continue;
    Id ds(H5Dopen2(file.get(), name, H5P_DEFAULT), H5Dclose);
    if (!hasAttribute(ds.get(), kDigestAttribute)) continue;
    const std::string expected = readStringAttribute(ds.get(), kDigestAttribute);
    ++digested;
    Id file_type(H5Dget_type(ds.get()), H5Tclose);
    Id mem_type(H5Tget_native_type(file_type.get(), H5T_DIR_ASCEND), H5Tclose);
    Id space(H5Dget_space(ds.get()), H5Sclose);
    const int rank = H5Sget_simple_extent_ndims(space.get());
    std::vector<hsize_t> dims(size_t(std::max(rank, 1)), 0);
    H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    size_t row_bytes = H5Tget_size(mem_type.get());
    for (int k = 1; k < rank; ++k) row_bytes *= size_t(dims[size_t(k)]);
    // Slabs of about 16 MiB: the whole store is read once, in row order.
    const hsize_t rows_per_read = std::max<hsize_t>(1, hsize_t((16u << 20) / std::max<size_t>(row_bytes, 1)));
    uint64_t hash = kDigestStart;
    for (hsize_t at = 0; at < dims[0]; at += rows_per_read) {
      if (between_reads) between_reads();
      std::vector<hsize_t> start(dims.size(), 0), count = dims;
      start[0] = at;
      count[0] = std::min(rows_per_read, dims[0] - at);
      buffer.resize(size_t(count[0]) * row_bytes);
      Id slab_space(H5Dget_space(ds.get()), H5Sclose);
      Id mem_space(H5Screate_simple(rank, count.data(), nullptr), H5Sclose);
      if (H5Sselect_hyperslab(slab_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr) < 0 ||
          H5Dread(ds.get(), mem_type.get(), mem_space.get(), slab_space.get(), H5P_DEFAULT, buffer.data()) < 0)
        throw InputError("the sample store '" + path + "' is damaged: its dataset '" + name +
                         "' cannot be read past row " + std::to_string(at) + "; create the samples again with `geodl samples`");
      addToDigest(hash, buffer.data(), buffer.size());
    }
    if (digestText(hash) != expected)
      throw InputError("the sample store '" + path + "' is damaged: its dataset '" + name +
                       "' differs from the digest `geodl samples` wrote with it (" + expected + ", now " +
                       digestText(hash) + "); create the samples again with `geodl samples`");
  }
  if (digested == 0)
    return {"the sample store '" + path + "' carries no digests (geo-deep-learning's stores and GeoDL's from before "
            "digests have none): damage to it cannot be told; create it again with `geodl samples` to have them"};
  return {};
}

void readSample(const std::string& path, int64_t index, std::vector<double>& image,
                std::vector<uint8_t>& labels) {
  SampleStoreReader reader(path);
  const size_t pixels = size_t(reader.sampleSize()) * reader.sampleSize();
  std::vector<float> values(pixels * reader.bands());
  labels.resize(pixels);
  reader.read(index, values.data(), labels.data());
  image.assign(values.begin(), values.end());
}

}  // namespace geodl::io
