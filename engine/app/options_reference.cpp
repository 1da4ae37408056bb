#include "app/options_reference.h"

#include <sstream>

#include "app/batch_probe_options.h"
#include "app/classify.h"
#include "app/create_samples.h"
#include "app/data_parallel.h"
#include "app/demo_dataset.h"
#include "app/evaluate.h"
#include "app/train.h"

namespace geodl {

namespace {

std::string code(const std::string& text) { return text.empty() ? "" : "`" + text + "`"; }

// Table cells hold no pipes.
std::string cell(std::string text) {
  for (size_t at = 0; (at = text.find('|', at)) != std::string::npos; at += 2) text.replace(at, 1, "\\|");
  return text;
}

template <class Options>
void section(std::ostringstream& out, const char* title, const char* intro, const OptionTable<Options>& table) {
  out << "\n## " << title << "\n\n" << intro << "\n\n"
      << "| option | config key | flag | QGIS parameter | value | default | what it does |\n"
      << "| --- | --- | --- | --- | --- | --- | --- |\n";
  for (const auto& o : table) {
    std::string key = code(o.key);
    for (const auto& a : o.aliases) key += ", " + code(a);
    std::string parameter = code(o.parameter);
    if (o.advanced) parameter += " (advanced)";
    std::string def = code(defaultText(o));
    if (!o.processing_default.empty()) def += "; QGIS: " + code(o.processing_default);
    out << "| " << o.name << " | " << key << " | " << (o.flag.empty() ? "" : code("--" + o.flag)) << " | "
        << parameter << " | " << cell(describeExpected(o)) << " | " << cell(def) << " | " << cell(o.help)
        << " |\n";
  }
}

template <class Options>
void parameters(std::ostringstream& out, const char* algorithm, const OptionTable<Options>& table) {
  std::string plain, advanced;
  for (const auto& o : table) {
    if (o.parameter.empty()) continue;
    std::string item = code(o.parameter);
    if (!o.key.empty()) item += " (" + code(o.key) + ")";
    else if (!o.flag.empty()) item += " (" + code("--" + o.flag) + ")";
    std::string& list = o.advanced ? advanced : plain;
    list += (list.empty() ? "" : ", ") + item;
  }
  out << "- `" << algorithm << "`: " << plain << (advanced.empty() ? "" : "; advanced: " + advanced) << ".\n";
}

}  // namespace

std::string processingParameterSummary() {
  std::ostringstream out;
  parameters(out, "geodl:createsamples", sampleOptionTable());
  parameters(out, "geodl:estimatebatchsize", batchProbeOptionTable());
  parameters(out, "geodl:train", trainOptionTable());
  parameters(out, "geodl:classify", classifyOptionTable());
  return out.str();
}

std::string optionsReference() {
  std::ostringstream out;
  out << "# GeoDL options\n\n"
         "Every option of every job, generated from the option tables in `engine/app/*_options.cpp` "
         "by `geodl options` (a test fails when this file is out of step; refresh it with "
         "`scripts/update-docs.sh`). Each option is declared once there: its config key "
         "(geo-deep-learning's spelling, and the aliases also accepted), its `geodl` flag, its "
         "Processing parameter, its type and range, its default (the options struct's own) and its "
         "help.\n\n"
         "- Precedence: defaults < config file < command line. QGIS has no config file: its "
         "parameters replace the defaults.\n"
         "- Relative paths: from the config file's folder in a config, from the current folder on "
         "the command line.\n"
         "- `models.*.x`: `*` is the model chosen (`global.model_name` or `--model`); "
         "geo-deep-learning's anchors and merge keys (`<<: *unet001`) work.\n"
         "- A key no table knows gets a warning naming the keys of its section; the "
         "geo-deep-learning keys without effect in GeoDL are listed at the end, with why.\n"
         "- Paths written `False`, `None` or empty mean none.\n";
  section(out, "geodl samples, geodl:createsamples",
          "Training samples from imagery and vector ground truth (`SampleOptions`).", sampleOptionTable());
  section(out, "geodl train, geodl:train", "Training a segmentation model (`TrainOptions`).",
          trainOptionTable());
  section(out, "geodl classify, geodl:classify",
          "Classifying rasters (`ClassifyJob` and its `ClassifyOptions`).", classifyOptionTable());
  section(out, "geodl batch-size, geodl:estimatebatchsize",
          "The largest training batch under a memory budget (`BatchProbeOptions`).", batchProbeOptionTable());
  section(out, "geodl samples, train and classify: the processes",
          "How `geodl` starts the processes of a job itself (`LaunchOptions`); QGIS runs one.",
          launchOptionTable());
  section(out, "geodl make-scene", "The built-in synthetic scenes (`DemoOptions`; the folder is the argument).",
          demoOptionTable());
  section(out, "geodl evaluate",
          "A class raster's accuracy against ground-truth polygons (`EvaluateOptions`; the class raster and the "
          "polygons are the arguments).",
          evaluateOptionTable());
  out << "\n## geo-deep-learning keys without effect\n\n"
         "Accepted in a config, with a warning that says why they do nothing.\n\n"
         "| config key | why |\n| --- | --- |\n";
  for (const auto& k : ignoredConfigKeys()) out << "| " << code(k.key) << " | " << cell(k.reason) << " |\n";
  return out.str();
}

}  // namespace geodl
