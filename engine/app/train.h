// Training a segmentation model on sample stores: the second job of the workflow.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "app/options.h"
#include "app/train_result.h"
#include "core/augment.h"
#include "base/progress.h"
#include "app/run_options.h"

namespace geodl {

enum class ClassWeighting {
  None,   // every class weighs the same (training.class_weights: false)
  Auto,   // inverse class frequency from the training store's pixel counts
  Given,  // class_weights, one per class
};

struct TrainOptions {
  std::string train_store;  // <data_path>/samples/trn_samples.hdf5
  std::string val_store;    // <data_path>/samples/val_samples.hdf5
  std::string output_folder;  // training.output_path: checkpoint, CSV, report (created)
  std::string model_path;     // the best model; empty: <output_folder>/model.pt

  // The model (global.model_name and models.<name>.*).
  std::string model = "unetsmall";
  // Gradient checkpointing on top of what the name implies: true, false, or auto (on only
  // when the batch would not fit the memory budget without it; off with batch_size auto).
  std::string checkpoint = "auto";
  bool dropout = false;
  double dropout_probability = 0.5;
  std::string pretrained;   // GeoDL model file, torch.save'd state dict, or VGG11 (ternausnet)
  std::string pretrained_encoder;  // the resnet models: torchvision's ResNet weights (torch.save'd)
  int encoder_freeze_epochs = 0;   // the encoder's learning rate is 0 for these first epochs
  double encoder_lr_factor = 1.0;  // the encoder's learning rate, relative to the others'
  int num_classes = 0;      // global.num_classes; 0: the store's
  int bands = 0;            // global.number_of_bands; 0: the store's
  int sample_size = 0;      // global.samples_size; 0: the store's
  // The bands' central wavelengths, micrometres (model.wavelengths); empty: the stores' (from
  // the rasters' band metadata), if they have them. DOFA needs them.
  std::vector<double> wavelengths;

  // The data.
  int64_t num_trn_samples = 0;  // the first N samples of each store; 0: all
  int64_t num_val_samples = 0;
  Augmentation augmentation;     // training only
  int loader_threads = 0;        // background threads preparing batches; 0: automatic
  int prefetch_batches = 3;      // batches prepared ahead

  // The optimization.
  int batch_size = 0;            // 0: the largest that fits run.memory_budget_mib
  int epochs = 100;
  std::string optimizer = "adam";  // adam, adamw, sgd
  double learning_rate = 1e-4;   // the optimizer's (onecycle: the peak)
  double weight_decay = 0;       // adam, sgd: L2 penalty; adamw: decoupled
  double momentum = 0.9;         // sgd
  bool nesterov = false;         // sgd
  std::string scheduler = "step";  // one of scheduleNames() (core/lr_schedule.h)
  int step_size = 4;             // step: the rate is multiplied by gamma every step_size epochs;
                                 // plateau: after step_size epochs without progress
  double gamma = 0.9;
  int warmup_epochs = 0;         // linear warm-up over these epochs (onecycle: its rise)
  ClassWeighting class_weighting = ClassWeighting::None;
  std::vector<double> class_weights;  // ClassWeighting::Given
  int patience = 0;              // early stopping after this many epochs without progress; 0: off
  std::string loss = "cross_entropy";  // one of lossNames() (core/losses.h)
  std::string best_metric = "loss";  // "loss" (validation loss) or "miou" (mean IoU)

  // Reproducibility and hardware.
  int64_t seed = -1;             // -1: a random seed, recorded in the checkpoint
  bool deterministic = false;    // deterministic algorithms (same seed: same losses)
  // Device, threads, precision (bf16: autocast), memory budget, and the ranks training
  // together (data parallel).
  RunOptions run;
  bool bf16 = false;             // precision bf16 (the older key)

  bool resume = false;           // continue from <output_folder>/last_checkpoint.pt
  bool sync_batchnorm = false;  // BatchNorm statistics over all ranks' batches
  std::string backend = "auto";  // the ranks' collectives: auto, nccl, gloo (resolveBackend)
  std::string config_text;       // the configuration as given, kept in the model file
};

// Checks everything (stores, model options, pretrained weights, output folder) before the
// first step, then trains with Adam and StepLR, validating each epoch. After each epoch the
// best model, the last checkpoint, metrics.csv and report.html are replaced atomically.
// Throws InputError/IoError for bad input, Cancelled (at the next batch; the last checkpoint
// stays; its message ends with resumeAdvice) when progress says so.
TrainResult train(const TrainOptions& options, Progress& progress);

// Checks the options alone, before any file is read: what the job cannot run without (named
// with its keys and flags), the ranges by the table, and the rules that join two fields. The
// job runs it first; the CLI before it starts ranks, so that the message comes once.
void checkTrainOptions(const TrainOptions& options);

// The checkpoint a run replaces after each epoch and --resume continues from:
// last_checkpoint.pt in the output folder.
std::string checkpointPath(const TrainOptions& options);

// What to do after a run stopped (cancelled, or a rank lost): where its last complete epoch
// is and how to continue from it, or that there is nothing to resume. train() ends the
// message of its Cancelled and of a lost rank with it: the CLI and QGIS say the same.
std::string resumeAdvice(const TrainOptions& options);

// Every option of the training job: config key, flag, QGIS parameter, range, help.
const OptionTable<TrainOptions>& trainOptionTable();

// The class weights ClassWeighting::Auto gives: total / (present classes x count), and 0
// for classes with no pixel.
std::vector<double> inverseFrequencyWeights(const std::vector<int64_t>& class_pixels);

}  // namespace geodl
