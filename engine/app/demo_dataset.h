// The built-in demo: two synthetic scenes, their prep and inference CSVs and a
// geo-deep-learning config that runs samples -> train -> classify on them.
#pragma once

#include <cstdint>
#include <string>

namespace geodl {

// Writes scene_trn and scene_val (size x size pixels), scene.csv, inference.csv and
// config.yaml into `folder`; returns the config's path.
std::string makeDemoDataset(const std::string& folder, int size, uint64_t seed);

}  // namespace geodl
