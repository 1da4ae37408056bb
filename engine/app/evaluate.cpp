#include "app/evaluate.h"

#include <algorithm>

#include "base/errors.h"
#include "base/hard_stop.h"
#include "io/labels.h"
#include "io/raster.h"

namespace geodl {

const OptionTable<EvaluateOptions>& evaluateOptionTable() {
  using O = EvaluateOptions;
  static const OptionTable<O> table = {
      option("field", &O::field)
          .cli("field")
          .describe("", GEODL_TR("The truth's class attribute: class ids, or the names of the class raster's "
                                 "categories (the model's classes).")),
      option("layer", &O::layer)
          .cli("layer")
          .describe("", GEODL_TR("The layer of the truth (default: the first).")),
  };
  return table;
}

EvaluateResult evaluate(const EvaluateOptions& o, Progress& progress) {
  io::RasterReader reader(o.classes);
  const auto& info = reader.info();
  if (info.bands != 1 || info.data_type != "Byte")
    throw InputError("'" + o.classes + "' is not a class raster (one Byte band); give the "
                     "output of `geodl classify`");
  EvaluateResult result;
  result.names = io::categoryNames(o.classes);
  io::LabelSource source{o.truth, o.layer, o.field, {}};
  io::LabelRasterizer truth(source, info, 255);
  if (!truth.stringValues().empty()) {
    // Class names: the raster's categories give their ids (0, the background, excluded).
    std::vector<std::string> by_id(result.names.begin() + (result.names.empty() ? 0 : 1), result.names.end());
    truth.numberStringClasses(by_id);
  }
  int classes = int(result.names.size());
  for (int id : truth.classes().ids) classes = std::max(classes, id + 1);
  classes = std::max(classes, 2);
  ConfusionMatrix confusion(classes, 255);
  std::vector<double> values;
  std::vector<uint8_t> valid, labels;
  const int block = 256;
  const hard_stop::LoopScope loop;
  for (int y = 0; y < info.height; y += block) {
    progress.checkCancelled();
    const int h = std::min(block, info.height - y);
    reader.read(0, y, info.width, h, values, valid);
    truth.rasterize(0, y, info.width, h, labels);
    std::vector<int64_t> predicted(values.size()), actual(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      predicted[i] = valid[i] ? int64_t(values[i]) : -1;  // nodata: not counted
      actual[i] = valid[i] ? int64_t(labels[i]) : 255;
    }
    confusion.update(predicted.data(), actual.data(), predicted.size());
    progress.report(double(y + h) / info.height, "");
  }
  result.metrics = confusion.metrics();
  result.names.resize(size_t(classes));
  for (int c = 0; c < classes; ++c)
    if (result.names[size_t(c)].empty()) result.names[size_t(c)] = std::to_string(c);
  return result;
}

}  // namespace geodl
