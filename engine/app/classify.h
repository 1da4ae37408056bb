// Classifying rasters of any size with a trained model: the third job of the workflow.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/options.h"
#include "app/run_options.h"
#include "model/model_info.h"
#include "base/file_identity.h"
#include "base/progress.h"

namespace geodl {

struct ClassifyOptions {
  std::string input;          // any GDAL raster
  std::string model_path;     // a GeoDL model file (inference.state_dict_path), or TorchScript
  std::string sidecar;        // TorchScript only: its description (default: beside it, .json/.yaml)
  std::string output;         // class raster (GeoTIFF)
  std::string probabilities;  // optional per-class probability raster (GeoTIFF)
  bool probabilities_float = false;  // Float32 0-1 instead of Byte 0-255
  int window = 0;             // inference.chunk_size; 0: automatic (chooseWindow)
  double overlap = -1;        // inference.overlap: percent of the window; -1: automaticOverlap
  int batch_size = 2;         // windows per forward pass; 0: as many as fit run.memory_budget_mib
  bool tta = false;           // average the 8 flips and quarter turns
  bool cog = false;           // Cloud Optimized GeoTIFF outputs
  std::string polygons;       // optional GeoPackage of the classes as polygons
  double min_area = 0;        // polygons smaller than this (map units squared) are dropped
  // Imagery unlike the model's training data (its pixel type, the units of its CRS, a pixel
  // size more than 2x off, values far outside the trained range) is classified with a
  // warning instead of refused. A different band count is refused all the same.
  bool accept_mismatch = false;
  // Classify the raster resampled on the fly to the model's pixel size (averaged where the
  // model's pixels are larger, bilinear where smaller), the outputs at the raster's own grid
  // (io/resampled.h).
  bool resample = false;
  // Continue a run that was stopped (killed, cancelled, a rank lost) from the blocks it
  // finished, kept beside the output (io/block_journal.h), instead of starting again; the run
  // must be the stopped one (the same files and options: resumeDescription).
  bool resume = false;
  // A job of many rasters: "stop" at the first raster that cannot be opened, read or
  // classified (the default), or "skip" it, naming it, and go on (classifyAll).
  std::string on_error = "stop";
  // Device, threads, precision (bf16: the weights and activations), memory budget, and the
  // ranks sharing the job (classifyAll).
  RunOptions run;
  // Only windows touching this extent (in the raster's CRS) are computed; the rest is nodata.
  bool has_extent = false;
  double extent[4] = {0, 0, 0, 0};  // minx, miny, maxx, maxy
  // Polygon mask (any OGR vector; reprojected into the raster's CRS): only windows with a
  // pixel inside a polygon are computed, and pixels outside every polygon are nodata.
  std::string mask;
  std::string mask_layer;  // empty: the first layer
  // Outputs whose names GeoDL made (from the working folder and the input's name, or from
  // the class raster's): a file there is replaced only when GeoDL wrote it, or with
  // run.overwrite.
  bool derived_output = false, derived_probabilities = false, derived_polygons = false;
};

struct ClassifyResult {
  std::string output, probabilities;
  int width = 0, height = 0;
  int64_t windows = 0, windows_computed = 0;
  int batch_size = 0;  // used
  int window = 0, overlap = 0;     // used, in pixels
  double computed_ratio = 0;       // pixels computed per output pixel (overlaps computed twice)
  std::string precision = "fp32";  // used
  std::vector<ModelClass> classes;    // the model's: ids, names, colours (for styling)
  std::vector<int64_t> class_pixels;  // per model class
  int64_t nodata_pixels = 0;
  int64_t polygons = 0, polygons_dropped = 0;
  std::vector<std::string> warnings;
  // on_error skip: why the raster was skipped (nothing of it written); empty when classified.
  std::string skipped;
};

// Slides windows over the raster in rows, blending overlapping class probabilities with
// smooth weights, and writes each row of the output as soon as no later window touches it:
// memory depends on the window and the raster's width, not its height. Edges are padded by
// reflection; every pixel is classified; nodata input pixels stay nodata. Checks the model
// against the raster first (bands; a warning for a far-off pixel size or a missing CRS).
// Throws InputError/IoError (nothing written) or Cancelled (nothing left behind).
ClassifyResult classify(const ClassifyOptions& options, Progress& progress);

// The runs of a job shared by the processes of `world` (one process: each run in turn).
// With more rasters than ranks, each rank classifies whole rasters (the largest first, to
// the least loaded rank); otherwise every raster is shared in bands of window rows
// (balanced by the windows computed) that rank 0 assembles: the outputs are the ones one
// process writes (the class raster byte for byte). A failure of any rank stops them all
// within `collective_timeout` seconds, with nothing of the raster at hand written; rank 0
// shows the whole job's progress. `done` is called on rank 0 with each run's result, in
// order (with whole rasters per rank, once all are done). The world and the collective
// timeout are the first run's (run.world, run.collective_timeout). With on_error skip, a
// raster that cannot be opened is skipped on every rank, and one refused or unreadable
// (InputError, RasterReadError) while a rank classifies it whole, or while one process does:
// its result says why (skipped), and the job goes on. Shared in bands by several ranks, a
// raster that fails once it is open stops the job (the ranks would not agree on it).
void classifyAll(const std::vector<ClassifyOptions>& runs, Progress& progress,
                 const std::function<void(size_t, const ClassifyResult&)>& done);

// A classification job as a config, the command line or QGIS gives it: one raster or many,
// and where their outputs go.
struct ClassifyJob {
  std::vector<std::string> inputs;  // inference.img_csv_file, or --input (a raster or a folder)
  std::string working_folder;       // NAME_inference.tif go here (inference.working_folder)
  std::string output;               // instead: the class raster of a single input
  bool probabilities = false;       // NAME_inference_probabilities.tif beside each output
  bool polygons = false;            // NAME_inference_polygons.gpkg beside each output
  ClassifyOptions options;          // the rest; explicit probability or polygon paths win
};

// A raster, or the rasters of a folder (every file GDAL opens as a raster, in name order;
// see io::rastersInFolder). Throws InputError for a folder without any.
std::vector<std::string> rastersOf(const std::string& input);

// A stopped classification of `input` with `model` into `output` that resume can continue
// (QGIS offers to): how many of its blocks of rows it finished, of how many. Empty when there
// is none, when it finished no block, or when it classified another file or with another
// model.
struct StoppedRun {
  int64_t finished = 0, blocks = 0;
};
std::optional<StoppedRun> stoppedClassification(const std::string& output, const std::string& input,
                                                const std::string& model);

// The options of each raster of the job, outputs named. Throws InputError when the job has
// no raster, no model or no output, or one output for several rasters; every run is
// checked before the first starts (checkRuns).
std::vector<ClassifyOptions> classifyRuns(const ClassifyJob& job);

// Several runs (a CSV or a folder of rasters), checked whole before the first is classified:
// every raster opens, no output is another run's input or output (two rasters of one name in
// different folders), and each existing output is of its own kind. Throws naming the file.
void checkRuns(const std::vector<ClassifyOptions>& runs);

// A run's outputs as the file checks take them (roles followed by `of`: " of 'INPUT'"), each
// derived one with GeoDL's mark to look for.
std::vector<JobOutput> classifyOutputs(const ClassifyOptions& run, const std::string& of = "");

// Every option of the classification job: config key, flag, QGIS parameter, range, help.
const OptionTable<ClassifyJob>& classifyOptionTable();

}  // namespace geodl
