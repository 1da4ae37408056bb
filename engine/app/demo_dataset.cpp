#include "app/demo_dataset.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "base/atomic_file.h"
#include "base/errors.h"
#include "base/file_kind.h"
#include "base/hard_stop.h"
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

namespace {

// The demo's config: geo-deep-learning's format.
const char* const kDemoConfig = "# GeoDL demo on the built-in synthetic scenes (geo-deep-learning's config format).\n"
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
          "  overlap: 25\n";

// A text file of the demo, finished under a temporary name. One that exists with other
// words (edited by its user) is not replaced.
AtomicOutput demoText(const std::string& path, const std::string& text) {
  if (const FileKind kind = fileKind(path); kind == FileKind::Folder || kind == FileKind::Special)
    throw InputError("'" + path + "' is " + describeFileKind(kind) + ", where make-scene writes its " +
                     std::filesystem::path(path).filename().string() + ": move it away, or give make-scene another folder");
  std::ifstream existing(path, std::ios::binary);
  if (existing) {
    const std::string old((std::istreambuf_iterator<char>(existing)), std::istreambuf_iterator<char>());
    if (old != text)
      throw InputError("'" + path + "' exists and is not the one make-scene writes (edited, or another file of that "
                       "name): GeoDL does not replace it; move it away, or give make-scene another folder");
  }
  AtomicOutput out(path);
  FileSink sink(out.temporary(), "'" + path + "'");
  sink.write(text.data(), text.size());
  sink.close();
  out.finish();
  return out;
}

}  // namespace

std::string makeDemoDataset(const DemoOptions& options) {
  checkOptions(demoOptionTable(), options);
  const std::string& folder = options.folder;
  const auto dir = std::filesystem::path(folder);
  if (std::filesystem::exists(dir) && !std::filesystem::is_directory(dir))
    throw InputError("'" + folder + "' is a file, not a folder: give make-scene a folder (it is created when missing)");
  const std::string config = (dir / "config.yaml").string();
  // The texts first: an edited config is refused before anything is written.
  std::vector<AtomicOutput> pending;
  OutputFolders folders;
  folders.create(folder, true);
  pending.push_back(demoText((dir / "scene.csv").string(),
                             "scene_trn.tif,scene_trn_labels.gpkg,class,trn\n"
                             "scene_val.tif,scene_val_labels.gpkg,class,val\n"));
  pending.push_back(demoText((dir / "inference.csv").string(), "scene_val.tif\n"));
  pending.push_back(demoText(config, kDemoConfig));
  const int size = options.size;
  const uint64_t seed = options.seed;
  io::SceneOptions o;
  o.size = size;
  o.seed = seed;
  io::makeSyntheticScene(folder, "scene_trn", o, &pending);
  o.seed = seed + 1;
  o.origin_x += size * o.pixel_size + 100;  // the validation scene lies beside it
  io::makeSyntheticScene(folder, "scene_val", o, &pending);
  // Every file complete (a full disk fails before this): all move into place together.
  const hard_stop::CommitScope moving;
  for (auto& out : pending) out.commit();
  return config;
}

}  // namespace geodl
