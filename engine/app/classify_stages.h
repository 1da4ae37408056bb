// The stages of classify() (app/classify.h), for classify.cpp and the files beside it; not
// part of the job's interface:
//   1. the plan (classify_plan.cpp): checks, the model, the raster, the windows, the batch;
//   2-5. the run (classify.cpp): one plan for all ranks, the outputs opened, the windows
//      computed, the outputs finished; the job of many rasters (classify_job.cpp).
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "app/classify.h"
#include "app/data_parallel.h"
#include "base/atomic_file.h"
#include "base/output_lock.h"
#include "core/tile_classifier.h"
#include "io/block_journal.h"
#include "io/labels.h"
#include "io/raster.h"
#include "io/resampled.h"
#include "model/model_file.h"

namespace geodl {

// What a run needs before its windows: the model, the raster, the plan.
struct RunPlan {
  OutputFolders folders;  // those it creates go again if the run fails
  OutputLocks locks;      // one job at a time writes its outputs (the writing rank's)
  Predictor predictor;
  // With resample at another pixel size than the model's: the view the windows are read from
  // and the raster itself, whose grid the outputs take.
  std::unique_ptr<io::ResampledView> view;
  std::unique_ptr<io::RasterReader> input;
  std::unique_ptr<io::RasterReader> reader;  // the windows' raster
  std::unique_ptr<io::LabelRasterizer> mask;
  TileJob job;
  std::string device_name;
  std::string precision;  // fp32, bf16 or fp16 (fp16: GPUs)
  torch::ScalarType type = torch::kFloat;  // of the weights
  std::vector<std::string> warnings;
};

// How the messages name an option: "the option accept_mismatch (inference.accept_mismatch,
// --accept-mismatch, ACCEPT_MISMATCH)", from its declaration.
std::string classifyOptionNamed(const std::string& name);

// on_error skip: a raster that fails is skipped and named, and the job goes on.
inline bool skipsFailures(const ClassifyOptions& o) { return o.on_error == "skip"; }

// 1. Checks, model, raster and plan: when any rank fails here (a file missing on one
// machine), every rank stops at once with its message.
void planRun(const ClassifyOptions& o, DataParallel& ranks, Progress& progress, RunPlan& run);
// The windows of `window` pixels and which of them to compute (extent, mask).
void planWindows(const ClassifyOptions& o, int window, RunPlan& run);
// Pixels computed by `computed` of the job's windows per pixel of its extent.
double computedRatio(const TileJob& job, int64_t computed);

// Softmax probabilities of a batch, averaged over the 8 flips and quarter turns with TTA;
// `type`: the weights' (kBFloat16 for bf16).
torch::Tensor predict(const Predictor& model, const torch::Tensor& x, bool tta, torch::ScalarType type);

// Resume (classify_resume.cpp). What a resumed run must share with the stopped one (JSON):
// GeoDL's version, the files it reads (path, size, time), every option that changes a pixel
// of the outputs, and the plan.
std::string resumeDescription(const ClassifyOptions& o, const RunPlan& run);
// With resume, the options with the stopped run's window and batch size where both leave
// them automatic (the memory measured now could choose others).
ClassifyOptions withStoppedPlan(const ClassifyOptions& o);
// A finished raster of a job of many as resume recognises it (JSON): the files it read and
// wrote (path, size, time) and its options.
std::string finishedRunKey(const ClassifyOptions& o);
// "the blocks it finished are kept in '...': run it again with ... resume ... to continue".
std::string resumeAdvice(const ClassifyOptions& o);
// Rank 0, with the outputs locked: the run's journal resumed (throws InputError naming what
// differs from the stopped run), or a stopped run's discarded (logged) and a new one started.
// Returns the blocks the stopped run finished; `started` gets those it kept parts of.
std::vector<io::JournalBlock> openJournal(const ClassifyOptions& o, const RunPlan& run,
                                          const io::JournalFolders& folders, Progress& progress,
                                          std::vector<io::StartedBlock>& started);

// 1-5: one raster, shared in bands between the ranks (all of it in one process).
ClassifyResult classifyShared(const ClassifyOptions& o, DataParallel& ranks, Progress& progress);

}  // namespace geodl
