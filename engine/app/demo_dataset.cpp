#include "app/demo_dataset.h"

#include <filesystem>

#include "base/atomic_file.h"
#include "io/synthetic_scene.h"

namespace geodl {

const OptionTable<DemoOptions>& demoOptionTable() {
  using O = DemoOptions;
  static const OptionTable<O> table = {
      option("size", &O::size)
          .range(64, 100000).cli("size")
          .describe("", GEODL_TR("Pixels per side of each scene (training and validation).")),
      option("seed", &O::seed)
          .range(0, 999999999999999).cli("seed")
          .describe("", GEODL_TR("The seed of the training scene; the validation scene's is the next.")),
  };
  return table;
}

std::string makeDemoDataset(const DemoOptions& options) {
  checkOptions(demoOptionTable(), options);
  const std::string& folder = options.folder;
  const int size = options.size;
  const uint64_t seed = options.seed;
  io::SceneOptions o;
  o.size = size;
  o.seed = seed;
  io::makeSyntheticScene(folder, "scene_trn", o);
  o.seed = seed + 1;
  o.origin_x += size * o.pixel_size + 100;  // the validation scene lies beside it
  io::makeSyntheticScene(folder, "scene_val", o);
  const auto dir = std::filesystem::path(folder);
  writeTextAtomically((dir / "scene.csv").string(),
                      "scene_trn.tif,scene_trn_labels.gpkg,class,trn\n"
                      "scene_val.tif,scene_val_labels.gpkg,class,val\n");
  writeTextAtomically((dir / "inference.csv").string(), "scene_val.tif\n");
  const std::string config = (dir / "config.yaml").string();
  writeTextAtomically(config, "# GeoDL demo on the built-in synthetic scenes (geo-deep-learning's config format).\n"
          "# Classes (string field 'class', sorted): 0 background, 1 building, 2 road,\n"
          "# 3 vegetation, 4 water.\n"
          "global:\n"
          "  samples_size: 128\n"
          "  num_classes: 5\n"
          "  data_path: .\n"
          "  number_of_bands: 3\n"
          "  model_name: unetsmall\n"
          "\n"
          "sample:\n"
          "  prep_csv_file: scene.csv\n"
          "  samples_dist: 96\n"
          "  remove_background: True\n"
          "  mask_input_image: False\n"
          "  min_annotated_percent: 0\n"
          "\n"
          "training:\n"
          "  output_path: model\n"
          "  batch_size: 16\n"
          "  num_epochs: 8\n"
          "  learning_rate: 0.001\n"
          "  weight_decay: 0\n"
          "  step_size: 4\n"
          "  gamma: 0.5\n"
          "  class_weights: False\n"
          "  seed: 1\n"
          "  augmentation:\n"
          "    rotate_limit: 45\n"
          "    rotate_prob: 0.5\n"
          "    hflip_prob: 0.5\n"
          "    vflip_prob: 0.5\n"
          "\n"
          "models:\n"
          "  unetsmall:\n"
          "    dropout: False\n"
          "    probability: 0.2\n"
          "\n"
          "inference:\n"
          "  img_csv_file: inference.csv\n"
          "  working_folder: classified\n"
          "  state_dict_path: model/model.pt\n"
          "  chunk_size: 128\n"
          "  overlap: 25\n");
  return config;
}

}  // namespace geodl
