// The options of the samples job, declared once (see app/options.h).
#include <filesystem>

#include "app/create_samples.h"
#include "app/data_folder.h"
#include "app/shared_options.h"
#include "app/csv.h"

namespace geodl {

namespace {

using O = SampleOptions;

// QGIS gives one raster and its ground truth: the first source.
SampleSource& firstSource(O& o) {
  if (o.sources.empty()) o.sources.emplace_back();
  return o.sources.front();
}

const std::vector<OptionChoice>& splitChoices() {
  static const std::vector<OptionChoice> choices = {
      {"dataset", GEODL_TR("All training")},
      {"percent", GEODL_TR("Validation percentage (spatial blocks)")},
      {"polygons", GEODL_TR("Validation polygon layer")},
  };
  return choices;
}

// What the samples come from, and how they are split.
OptionTable<O> sourceOptions() {
  return {
      option<O>("raster", OptionType::Path, [](O& o, const OptionInput& v) { firstSource(o).raster = v.text; })
          .qgis("INPUT").declaredByPlugin()
          .describe(GEODL_TR("Raster layer"),
                    GEODL_TR("Any GDAL raster, any number of bands (Byte, UInt16, Int16, Float32...); nodata "
                             "pixels are left out of the loss.")),
      option<O>("vector", OptionType::Path, [](O& o, const OptionInput& v) { firstSource(o).vector = v.text; })
          .qgis("VECTOR").declaredByPlugin()
          .describe(GEODL_TR("Ground truth polygons"),
                    GEODL_TR("Polygons in any CRS, reprojected onto the raster's grid; with \"Selected features "
                             "only\", only those.")),
      option<O>("vector_layer", OptionType::Text,
                [](O& o, const OptionInput& v) { firstSource(o).layer = v.text; })
          .describe("", GEODL_TR("The layer of the ground truth (default: the first); QGIS sets it.")),
      option<O>("field", OptionType::Text, [](O& o, const OptionInput& v) { firstSource(o).field = v.text; })
          .qgis("FIELD").declaredByPlugin()
          .describe(GEODL_TR("Class field"),
                    GEODL_TR("Integer class ids (0 is the background), or strings, numbered 1, 2... in sorted "
                             "order. Where polygons overlap, the higher class id wins.")),
      option<O>("prep_csv_file", OptionType::Path,
                [](O& o, const OptionInput& v) { o.sources = readPrepCsv(v.text); })
          .config("sample.prep_csv_file").cli("prep-csv-file")
          .describe("", GEODL_TR("The prep CSV: image, vector, attribute and dataset (trn, val or tst) per line, "
                                 "paths relative to the CSV.")),
      option<O>("data_path", OptionType::Path,
                [](O& o, const OptionInput& v) {
                  o.output_folder = samplesFolder(v.text);
                })
          .config("global.data_path").cli("data-path")
          .describe("", GEODL_TR("The data folder: the stores go to DATA_PATH/samples.")),
      option<O>("split", OptionType::Choice,
                [](O& o, const OptionInput& v) {
                  o.split_mode = v.text == "percent"  ? SplitMode::ValidationPercent
                                 : v.text == "polygons" ? SplitMode::ValidationPolygons
                                                        : SplitMode::FromSources;
                },
                [](const O& o) -> std::string {
                  return o.split_mode == SplitMode::ValidationPercent  ? "percent"
                         : o.split_mode == SplitMode::ValidationPolygons ? "polygons"
                                                                        : "dataset";
                })
          .oneOf([] { return splitChoices(); }).appliedLast()
          .config("sample.split").cli("split").qgis("SPLIT").qgisDefault("percent")
          .describe(GEODL_TR("Split"),
                    GEODL_TR("dataset: each line's dataset column (in QGIS: all training); percent: random "
                             "spatial blocks go to validation, so overlapping samples never fall on both sides; "
                             "polygons: the samples inside the validation polygons. Setting val_percent or "
                             "validation_vector chooses the split too.")),
      option<O>("validation_percent", OptionType::Number,
                [](O& o, const OptionInput& v) {
                  o.validation_percent = v.number;
                  o.split_mode = v.number > 0 ? SplitMode::ValidationPercent : SplitMode::FromSources;
                },
                [](const O& o) { return optionText(o.validation_percent); })
          .range(0, 99).config("sample.val_percent").cli("val-percent").qgis("VALIDATION_PERCENT")
          .describe(GEODL_TR("Validation percentage"),
                    GEODL_TR("Percent of each raster's area that goes to validation (split percent); 0 keeps the "
                             "dataset column.")),
      option<O>("validation_vector", OptionType::Path,
                [](O& o, const OptionInput& v) {
                  o.validation_vector = v.text;
                  if (!v.text.empty()) o.split_mode = SplitMode::ValidationPolygons;
                },
                [](const O& o) { return o.validation_vector; })
          .config("sample.validation_vector").cli("validation-vector").qgis("VALIDATION_LAYER").declaredByPlugin()
          .describe(GEODL_TR("Validation polygons"),
                    GEODL_TR("Samples inside these polygons go to validation (split polygons).")),
      option("validation_layer", &O::validation_layer)
          .config("sample.validation_layer").cli("validation-layer")
          .describe("", GEODL_TR("The layer of validation_vector (default: the first).")),
  };
}

// The windows, their labels, and where they go.
OptionTable<O> windowOptions() {
  return {
      option("sample_size", &O::sample_size)
          .range(kMinSampleSize, kMaxSampleSize).config("global.samples_size").cli("samples-size").qgis("SAMPLE_SIZE")
          .describe(GEODL_TR("Sample size (pixels)"),
                    GEODL_TR("Height and width of the samples in pixels, typically 256.")),
      option("stride", &O::stride)
          .range(1, 100000).config("sample.samples_dist").cli("samples-dist").qgis("STRIDE")
          .describe(GEODL_TR("Distance between samples (pixels)"),
                    GEODL_TR("Pixels from one sample to the next, typically 200.")),
      option("min_annotated_percent", &O::min_annotated_percent)
          .range(0, 100).config("sample.min_annotated_percent").cli("min-annotated-percent").qgis("MIN_ANNOTATED")
          .describe(GEODL_TR("Minimum annotated percent"),
                    GEODL_TR("Samples with a smaller share of non-background, non-ignored pixels are dropped.")),
      option("num_classes", &O::num_classes)
          .range(0, 255).config("global.num_classes").cli("num-classes").qgis("NUM_CLASSES", true)
          .minimumReads(GEODL_TR("From the data"))
          .describe(GEODL_TR("Number of classes, background included"),
                    GEODL_TR("Classes, background included; checked against the data (0: taken from it).")),
      option("bands", &O::bands)
          .range(0, 10000).config("global.number_of_bands").cli("number-of-bands")
          .describe("", GEODL_TR("Bands of the rasters, checked against them (0: not checked).")),
      option("ignored_values", &O::ignored_values)
          .config("sample.ignore_values").cli("ignore-values").qgis("IGNORE_VALUES", true)
          .describe(GEODL_TR("Ignored class values (comma-separated)"),
                    GEODL_TR("Class values whose pixels become the ignore index (255), left out of the loss.")),
      option("unlabelled_ignored", &O::unlabelled_ignored)
          .config("sample.unlabelled_ignored").cli("unlabelled-ignored").qgis("UNLABELLED_IGNORED", true)
          .describe(GEODL_TR("Pixels under no polygon are unknown, not background (sparse annotations)"),
                    GEODL_TR("Pixels under no polygon are ignored instead of being the background (sparse "
                             "annotations).")),
      option("remove_background", &O::remove_background)
          .config("sample.remove_background").cli("remove-background").qgis("REMOVE_BACKGROUND", true)
          .describe(GEODL_TR("Drop samples of background only"),
                    GEODL_TR("Samples without a single annotated pixel are dropped.")),
      option("mask_input_image", &O::mask_input_image)
          .config("sample.mask_input_image").cli("mask-input-image").qgis("MASK_INPUT_IMAGE", true)
          .describe(GEODL_TR("Set image pixels of the background to 0"),
                    GEODL_TR("Image pixels labelled background are set to 0 in the samples.")),
      option("mask_reference", &O::mask_reference)
          .config("sample.mask_reference").cli("mask-reference").qgis("MASK_REFERENCE", true)
          .describe(GEODL_TR("Ignore labels where the image is 0"),
                    GEODL_TR("Label pixels where every band of the image is 0 are ignored.")),
      option("seed", &O::seed)
          .range(0, 2147483647).config("sample.seed", {"global.seed"}).cli("seed").qgis("SEED", true)
          .describe(GEODL_TR("Random seed (validation blocks)"),
                    GEODL_TR("Seed of the random validation blocks: the same seed gives the same split.")),
      option("output_folder", &O::output_folder)
          .path().qgis("OUTPUT_FOLDER").declaredByPlugin()
          .describe(GEODL_TR("Sample stores folder"),
                    GEODL_TR("Where trn_samples.hdf5, val_samples.hdf5 and tst_samples.hdf5 are written.")),
      option("footprint_path", &O::footprint_path)
          .path("gpkg").cli("footprint").qgis("FOOTPRINT").declaredByPlugin()
          .describe(GEODL_TR("Sample footprints"),
                    GEODL_TR("A GeoPackage with one polygon per sample and its split (default: "
                             "samples_footprint.gpkg beside the stores).")),
      option("resume", &O::resume)
          .cli("resume").qgis("RESUME", true)
          .describe(GEODL_TR("Resume a stopped job"),
                    GEODL_TR("Continue a sample job that was stopped (killed, cancelled, a rank lost) from the windows "
                             "it read, kept beside the stores, with the same files and options; without it, a "
                             "stopped job's windows are discarded and it starts again.")),
      option("rank", &O::rank)
          .range(0, 65535).cli("rank")
          .describe("", GEODL_TR("This process's rank, for data-parallel sampling: it keeps every world_size-th "
                                 "window.")),
      option("world_size", &O::world_size)
          .range(1, 65536).cli("world-size")
          .describe("", GEODL_TR("Number of processes sampling together.")),
  };
}

}  // namespace

const OptionTable<SampleOptions>& sampleOptionTable() {
  static const OptionTable<O> table = [] {
    OptionTable<O> all = sourceOptions();
    for (auto part : {windowOptions(), runOptionTable(&O::run, "sample", RunOptionSet::ProcessesOnly)})
      all.insert(all.end(), part.begin(), part.end());
    return all;
  }();
  return table;
}

}  // namespace geodl
