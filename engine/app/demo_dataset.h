// The built-in demo: two synthetic scenes, their prep and inference CSVs and a
// geo-deep-learning config that runs samples -> train -> classify on them.
#pragma once

#include <cstdint>
#include <string>

#include "app/options.h"

namespace geodl {

struct DemoOptions {
  std::string folder;  // created if missing
  int size = 1024;     // pixels per side of each scene
  uint64_t seed = 1;   // the training scene's; the validation scene's is the next
};

// Writes scene_trn and scene_val (size x size pixels), scene.csv, inference.csv and
// config.yaml into the folder; returns the config's path. The options are checked by their
// table first.
std::string makeDemoDataset(const DemoOptions& options);

// The options of `geodl make-scene` (the folder is its argument).
const OptionTable<DemoOptions>& demoOptionTable();

}  // namespace geodl
