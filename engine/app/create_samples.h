// Training samples from imagery and vector ground truth: the first job of the workflow.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "app/options.h"
#include "base/progress.h"
#include "core/model_spec.h"
#include "app/run_options.h"

namespace geodl {

// One raster and its ground truth (a row of geo-deep-learning's prep CSV).
struct SampleSource {
  std::string raster;
  std::string vector;
  std::string layer;        // empty: the first layer
  std::string field;        // class attribute, integer or string
  std::string split = "trn";  // trn, val or tst (used when split_mode is FromSources)
};

enum class SplitMode {
  FromSources,         // each source's own split (the CSV's 4th column)
  ValidationPercent,   // seeded spatial blocks of each raster go to val
  ValidationPolygons,  // windows inside validation_vector's polygons go to val
};

struct SampleOptions {
  std::vector<SampleSource> sources;
  std::string output_folder;  // {trn,val,tst}_samples.hdf5 go here (created if missing)
  int sample_size = 256;      // global.samples_size
  int stride = 200;           // sample.samples_dist
  int num_classes = 0;        // global.num_classes (background included); 0: not checked
  int bands = 0;              // global.number_of_bands; 0: not checked
  double min_annotated_percent = 0;  // sample.min_annotated_percent
  bool remove_background = false;    // sample.remove_background: drop windows of background only
  // Continue a job that was stopped (killed, cancelled, a rank lost) from the windows it read,
  // kept in its journal beside the stores, instead of starting again; the job must be the
  // stopped one (the same files and options).
  bool resume = false;
  bool mask_input_image = false;     // sample.mask_input_image: image set to 0 where label is 0
  bool mask_reference = false;       // sample.mask_reference: label ignored where image is all 0
  std::vector<std::string> ignored_values;  // class values that become the ignore index
  int ignore_index = 255;
  // Pixels under no polygon: the background class (fully annotated ground truth), or
  // ignored (sparse annotations, where unlabelled does not mean background).
  bool unlabelled_ignored = false;
  SplitMode split_mode = SplitMode::FromSources;
  double validation_percent = 20;    // ValidationPercent
  std::string validation_vector;     // ValidationPolygons
  std::string validation_layer;      // its layer; empty: the first
  uint64_t seed = 0;
  std::string footprint_path;        // empty: <output_folder>/samples_footprint.gpkg
  // A manual shard: this process keeps windows i with i % world_size == rank, and writes
  // stores of those alone.
  int rank = 0;
  int world_size = 1;
  // The processes of a launcher (--nproc, torchrun, srun) sharing the job (run.world, and
  // run.collective_timeout before a silent rank stops all): each takes the windows i with
  // i % size == rank into a part, and rank 0 merges the parts into the stores one process
  // writes (the same samples, in the same order, with the same metadata). The job computes
  // on the CPU: the device, threads and precision of `run` are not its options.
  RunOptions run;
};

struct SplitResult {
  std::string split;
  std::string path;
  int64_t samples = 0;
  std::vector<int64_t> class_pixels;  // per class_ids entry
};

struct SampleResult {
  std::vector<SplitResult> splits;
  std::string footprint_path;
  std::vector<int> class_ids;
  std::vector<std::string> class_names;
  std::vector<double> band_mean, band_std;
  int64_t windows = 0;  // windows considered (kept or not)
  int64_t pixels_read = 0;
  std::vector<std::string> warnings;
};

// Reads each raster window by window (memory does not grow with its size), rasterizes its
// polygons on the raster's grid, and writes one HDF5 store per split plus a footprint
// layer, each under a temporary name renamed when complete. Throws InputError/IoError
// before writing anything for bad input, Cancelled when progress says so.
SampleResult createSamples(const SampleOptions& options, Progress& progress);

// Checks the options alone, before any file is read: what the job cannot run without (named
// with its key and flag), the ranges by the table, and the rules that join two fields. The
// job runs it first; the CLI before it starts ranks, so that the message comes once.
void checkSampleOptions(const SampleOptions& options);

// Every option of the samples job: config key, flag, QGIS parameter, range, help.
const OptionTable<SampleOptions>& sampleOptionTable();

}  // namespace geodl
