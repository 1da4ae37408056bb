// geo-deep-learning's data folder (global.data_path), written down once: the sample stores
// in DATA_PATH/samples, one per split (trn_samples.hdf5, val_samples.hdf5, tst_samples.hdf5),
// and the trained model in DATA_PATH/model. The samples job writes this layout and the
// training job reads it.
#pragma once

#include <filesystem>
#include <string>

namespace geodl {

// DATA_PATH/samples: where `geodl samples` writes the stores.
inline std::string samplesFolder(const std::string& data_path) {
  return (std::filesystem::path(data_path) / "samples").string();
}

// The store of `split` (trn, val or tst) in a samples folder: SPLIT_samples.hdf5.
inline std::string storeOf(const std::string& samples_folder, const std::string& split) {
  return (std::filesystem::path(samples_folder) / (split + "_samples.hdf5")).string();
}

// DATA_PATH/model: where `geodl train` writes the model, its checkpoint and report.
inline std::string modelFolder(const std::string& data_path) {
  return (std::filesystem::path(data_path) / "model").string();
}

}  // namespace geodl
