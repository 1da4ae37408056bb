// The options of the classification job, declared once (see app/options.h).
#include <algorithm>
#include <filesystem>
#include <sstream>

#include "app/classify.h"
#include "app/csv.h"
#include "app/shared_options.h"
#include "base/errors.h"

namespace geodl {

namespace {

using O = ClassifyJob;

void parseExtent(const std::string& text, ClassifyOptions& o) {
  std::istringstream in(text);
  char c1 = 0, c2 = 0, c3 = 0;
  double e[4];
  if (!(in >> e[0] >> c1 >> e[1] >> c2 >> e[2] >> c3 >> e[3]) || c1 != ',' || c2 != ',' || c3 != ',' ||
      !(e[0] < e[2] && e[1] < e[3]))
    throw InputError("the extent takes minx,miny,maxx,maxy in the raster's CRS (min below max), not '" +
                     text + "'");
  std::copy(e, e + 4, o.extent);
  o.has_extent = true;
}

// An option of a ClassifyOptions field.
template <class T>
Option<O> engine(const char* name, T ClassifyOptions::*member) {
  return nestedOption(option(name, member), &O::options);
}

// The job's own options, then the run options (runOptionTable).
OptionTable<O> jobOptions() {
  return {

      option<O>("img_csv_file", OptionType::Path,
                [](O& o, const OptionInput& v) { o.inputs = readInferenceCsv(v.text); })
          .config("inference.img_csv_file").cli("img-csv-file")
          .describe("", GEODL_TR("A CSV with one raster per line (first column, relative to the CSV).")),
      option<O>("input", OptionType::Path, [](O& o, const OptionInput& v) { o.inputs = rastersOf(v.text); })
          .cli("input").qgis("INPUT").declaredByPlugin()
          .describe(GEODL_TR("Raster layer"),
                    GEODL_TR("The raster to classify (on the command line: a raster or a folder of them, "
                             "instead of img_csv_file).")),
      engine("model_path", &ClassifyOptions::model_path)
          .path("pt").config("inference.state_dict_path").cli("model").qgis("MODEL")
          .describe(GEODL_TR("Model file"),
                    GEODL_TR("The .pt file training wrote; it says which bands, normalization and classes it "
                             "needs. A TorchScript module classifies too, with a sidecar.")),
      engine("sidecar", &ClassifyOptions::sidecar)
          .path().config("inference.sidecar").cli("sidecar")
          .describe("", GEODL_TR("For a TorchScript model: its description, JSON or YAML (default: beside it).")),
      engine("window", &ClassifyOptions::window)
          .range(0, 100000).config("inference.chunk_size").cli("window").qgis("WINDOW")
          .minimumReads(GEODL_TR("Automatic"))
          .describe(GEODL_TR("Window size (pixels)"),
                    GEODL_TR("Pixels per window side (0: as large as the memory budget allows a batch of, up to "
                             "512 and no larger than the raster needs, at least the model's sample size).")),
      engine("overlap", &ClassifyOptions::overlap)
          .range(-1, 49).config("inference.overlap").cli("overlap").qgis("OVERLAP")
          .minimumReads(GEODL_TR("Automatic")).qgisDecimals(1)
          .describe(GEODL_TR("Overlap (percent of the window)"),
                    GEODL_TR("Percent of the window shared with each neighbour, blended smoothly, e.g. 25 (-1: "
                             "what blending needs in pixels: a quarter of the model's sample size, at least 32, "
                             "at most a quarter of the window).")),
      engine("batch_size", &ClassifyOptions::batch_size)
          .range(0, 10000).config("inference.batch_size").cli("batch-size").qgis("BATCH_SIZE")
          .minimumReads(GEODL_TR("Automatic"))
          .describe(GEODL_TR("Batch size (windows)"),
                    GEODL_TR("Windows per forward pass; more is faster until memory runs out (0: as many as "
                             "fit the memory budget).")),
      engine("tta", &ClassifyOptions::tta)
          .config("inference.tta").cli("tta").qgis("TTA")
          .describe(GEODL_TR("Test-time augmentation"),
                    GEODL_TR("Average over the 8 flips and quarter turns: 8 times slower, often smoother.")),
      option<O>("extent", OptionType::Text, [](O& o, const OptionInput& v) { parseExtent(v.text, o.options); })
          .cli("extent").qgis("EXTENT").declaredByPlugin()
          .describe(GEODL_TR("Extent"),
                    GEODL_TR("minx,miny,maxx,maxy in the raster's CRS: only windows touching it are computed, "
                             "the rest is nodata.")),
      engine("mask", &ClassifyOptions::mask)
          .path().config("inference.mask").cli("mask").qgis("MASK").declaredByPlugin()
          .describe(GEODL_TR("Mask polygons"),
                    GEODL_TR("Only windows with a pixel inside a polygon are computed; pixels outside every "
                             "polygon are nodata (reprojected to the raster's CRS).")),
      engine("mask_layer", &ClassifyOptions::mask_layer)
          .config("inference.mask_layer").cli("mask-layer")
          .describe("", GEODL_TR("The layer of the mask (default: the first).")),
      engine("min_area", &ClassifyOptions::min_area)
          .range(0, 1e300).config("inference.min_area").cli("min-area").qgis("MIN_AREA", true)
          .describe(GEODL_TR("Minimum polygon area (map units squared)"),
                    GEODL_TR("Class polygons smaller than this are dropped.")),
      engine("accept_mismatch", &ClassifyOptions::accept_mismatch)
          .config("inference.accept_mismatch").cli("accept-mismatch").qgis("ACCEPT_MISMATCH", true)
          .describe(GEODL_TR("Accept imagery unlike the training data"),
                    GEODL_TR("Classify a raster whose pixel type, CRS units, pixel size (more than 2x off), "
                             "values (far outside the trained range) or band wavelengths differ from the model's "
                             "training data, with a warning, instead of refusing it.")),
      engine("resample", &ClassifyOptions::resample)
          .config("inference.resample").cli("resample").qgis("RESAMPLE", true)
          .describe(GEODL_TR("Resample to the model's pixel size"),
                    GEODL_TR("Classify the raster resampled on the fly to the pixel size the model was trained "
                             "on (averaged where its pixels are smaller, bilinear where larger), and write the "
                             "outputs at the raster's own grid (classes by nearest pixel or majority, "
                             "probabilities bilinear or averaged).")),
      engine("resume", &ClassifyOptions::resume)
          .cli("resume").qgis("RESUME", true)
          .describe(GEODL_TR("Resume a stopped classification"),
                    GEODL_TR("Continue a classification that was stopped (killed, cancelled, a rank lost) from the "
                             "blocks it finished, kept beside the output, with the same files and options; "
                             "without it, a stopped run's blocks are discarded and it starts again.")),
      engine("on_error", &ClassifyOptions::on_error)
          .oneOf({{"stop", GEODL_TR("Stop the job")}, {"skip", GEODL_TR("Skip the raster, name it, and go on")}})
          .config("inference.on_error").cli("on-error")
          .describe("", GEODL_TR("For many rasters: stop at the first that cannot be opened, read or classified, "
                                 "or skip it (the summary lists those skipped, and why) and go on.")),
      engine("cog", &ClassifyOptions::cog)
          .config("inference.cog").cli("cog").qgis("COG", true)
          .describe(GEODL_TR("Cloud Optimized GeoTIFF"), GEODL_TR("Write Cloud Optimized GeoTIFFs.")),
      option("working_folder", &O::working_folder)
          .path().config("inference.working_folder").cli("working-folder")
          .describe("", GEODL_TR("Where NAME_inference.tif goes for each raster.")),
      option("output", &O::output)
          .path("tif").cli("output").qgis("OUTPUT").declaredByPlugin()
          .describe(GEODL_TR("Classes"),
                    GEODL_TR("The class raster (GeoTIFF; or a .vrt over parts that every rank writes in place), styled "
                             "with the model's classes; for one raster.")),
      option("probabilities", &O::probabilities)
          .config("inference.probabilities").cli("probabilities")
          .describe("", GEODL_TR("Also write NAME_inference_probabilities.tif: one band per class, 0-255.")),
      engine("probabilities_float", &ClassifyOptions::probabilities_float)
          .config("inference.probabilities_float").cli("probabilities-float")
          .describe("", GEODL_TR("The probabilities as Float32 0-1 (implies probabilities).")),
      engine("probabilities_path", &ClassifyOptions::probabilities)
          .path("tif").qgis("PROBABILITIES").declaredByPlugin()
          .describe(GEODL_TR("Class probabilities"),
                    GEODL_TR("One band per class, 0-255 (GeoTIFF).")),
      option("polygons", &O::polygons)
          .config("inference.polygons").cli("polygons")
          .describe("", GEODL_TR("Also write NAME_inference_polygons.gpkg: the classes as polygons.")),
      engine("polygons_path", &ClassifyOptions::polygons)
          .path("gpkg").qgis("POLYGONS").declaredByPlugin()
          .describe(GEODL_TR("Class polygons"),
                    GEODL_TR("The classes as polygons (GeoPackage: class_id, class_name, area).")),
  };
}

}  // namespace

const OptionTable<ClassifyJob>& classifyOptionTable() {
  static const OptionTable<O> table = [] {
    OptionTable<O> all = jobOptions();
    for (const auto& o : runOptionTable(&ClassifyOptions::run, "inference", RunOptionSet::Computing))
      all.push_back(nestedOption(o, &O::options));
    return all;
  }();
  return table;
}

}  // namespace geodl
