// HDF5 sample stores in geo-deep-learning's layout: `sat_img` (N x S x S x B, the raster's
// own data type) and `map_img` (N x S x S, uint8), plus GeoDL's metadata.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace geodl::io {

// Everything a store says about its samples besides the pixels.
struct StoreMetadata {
  std::string engine_version;
  std::string split;  // trn, val or tst
  int sample_size = 0;
  int bands = 0;
  std::string data_type;  // GDAL name: Byte, UInt16, Int16, Float32...
  int num_classes = 0;
  int ignore_index = 255;
  std::vector<int> class_ids;
  std::vector<std::string> class_names;
  std::vector<int64_t> class_pixel_counts;  // in this store, per class_ids entry
  std::vector<double> band_mean;            // of the training samples' valid pixels
  std::vector<double> band_std;
  std::vector<double> band_min;             // the training samples' value range, per band
  std::vector<double> band_max;             // (both empty in older stores and geo-deep-learning's)
  std::vector<double> wavelengths;          // the bands' (micrometres), from the rasters' band
                                            // metadata; empty where they have none
  std::vector<std::string> sources;  // source rasters
  std::vector<std::string> source_crs_wkt;
  std::string crs_wkt;  // of the first source
};

// Writes one store under a temporary name; finish() completes it there (metadata, closed,
// flushed to disk) and commit() renames it into place, so that a job finishes all its
// outputs before it replaces any. Destroyed without commit(), it removes the temporary
// file: nothing that looks complete is left. Write failures are IoErrors naming the store
// ("no space left on the device" when that is why).
class SampleStoreWriter {
 public:
  // data_type: the GDAL name of the pixels' type (stored natively).
  SampleStoreWriter(const std::string& path, int sample_size, int bands,
                    const std::string& data_type);
  ~SampleStoreWriter();
  SampleStoreWriter(const SampleStoreWriter&) = delete;
  SampleStoreWriter& operator=(const SampleStoreWriter&) = delete;

  // image: S x S x B values (pixel-interleaved), labels: S x S; window: x, y, w, h in the
  // source raster's pixels; geotransform: the sample's own.
  void append(const std::vector<double>& image, const std::vector<uint8_t>& labels,
              const std::array<int, 4>& window, const std::array<double, 6>& geotransform,
              int source_index);
  int64_t size() const;
  void finish(const StoreMetadata& metadata);
  void commit();
  const std::string& path() const { return path_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string path_;
};

// What a store holds, read back (for tests, training and `geodl info`).
struct StoreContents {
  StoreMetadata metadata;
  int64_t samples = 0;
};
StoreContents readStoreMetadata(const std::string& path);
// Reads samples from a store kept open (geo-deep-learning's stores too: only sat_img and
// map_img are needed). Not thread-safe: one reader per thread.
class SampleStoreReader {
 public:
  explicit SampleStoreReader(const std::string& path);  // throws IoError / InputError
  ~SampleStoreReader();
  SampleStoreReader(const SampleStoreReader&) = delete;
  SampleStoreReader& operator=(const SampleStoreReader&) = delete;

  int64_t size() const { return size_; }
  int sampleSize() const { return sample_size_; }
  int bands() const { return bands_; }
  // Sample `index`: image S x S x B (pixel-interleaved) and labels S x S.
  void read(int64_t index, float* image, uint8_t* labels) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string path_;
  int64_t size_ = 0;
  int sample_size_ = 0, bands_ = 0;
};

// Reads every dataset of the store once and compares it with the digest `geodl samples`
// wrote on it (FNV-1a over its bytes in row order). Throws InputError naming the store and
// the first dataset that differs or cannot be read (damaged); returns a warning for a store
// without digests (geo-deep-learning's, or an older GeoDL's). `between_reads` runs before
// each read of about 16 MiB (a cancellation check).
std::vector<std::string> verifyStore(const std::string& path, const std::function<void()>& between_reads = {});

// The geotransform of sample `index` (all zeros in stores without one, e.g.
// geo-deep-learning's): its pixel size is the training data's.
std::array<double, 6> readSampleGeotransform(const std::string& path, int64_t index);

// One sample's pixels and labels (opens the store for this one read).
void readSample(const std::string& path, int64_t index, std::vector<double>& image,
                std::vector<uint8_t>& labels);

}  // namespace geodl::io
