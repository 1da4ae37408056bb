// The options of the training job, declared once (see app/options.h).
#include <filesystem>

#include "app/data_folder.h"
#include "app/shared_options.h"
#include "app/train.h"
#include "core/batch_probe.h"
#include "core/model_spec.h"

namespace geodl {

namespace fs = std::filesystem;

namespace {

using O = TrainOptions;

// The augmentation keys: in training.augmentation, or directly under training (both have
// been geo-deep-learning's).
Option<O> augmentation(const char* name, double Augmentation::*member) {
  const std::string key(name);
  return option<O>(name, OptionType::Number,
                   [member](O& o, const OptionInput& v) { o.augmentation.*member = v.number; },
                   [member](const O& o) { return optionText(o.augmentation.*member); })
      .config("training.augmentation." + key, {"training." + key});
}

// The data and the model.
OptionTable<O> dataAndModelOptions() {
  return {
      option<O>("data_path", OptionType::Path,
                [](O& o, const OptionInput& v) {
                  o.train_store = storeOf(samplesFolder(v.text), "trn");
                  o.val_store = storeOf(samplesFolder(v.text), "val");
                  o.output_folder = modelFolder(v.text);
                })
          .config("global.data_path").cli("data-path")
          .describe("", GEODL_TR("The data folder: the stores are read from DATA_PATH/samples, the model goes "
                                 "to DATA_PATH/model unless output_path says otherwise.")),
      option("train_store", &O::train_store)
          .path("hdf5").cli("train-store").qgis("TRAINING_STORE")
          .describe(GEODL_TR("Training samples (HDF5)"),
                    GEODL_TR("The training store that \"Create training samples\" wrote (trn_samples.hdf5).")),
      option("val_store", &O::val_store)
          .path("hdf5").cli("val-store").qgis("VALIDATION_STORE")
          .describe(GEODL_TR("Validation samples (HDF5)"),
                    GEODL_TR("The validation store (val_samples.hdf5).")),
      option("output_folder", &O::output_folder)
          .path().config("training.output_path").cli("output-path")
          .describe("", GEODL_TR("The folder of model.pt, last_checkpoint.pt, metrics.csv and report.html.")),
      modelOption(option("model", &O::model), "global.model_name"),
      option("sample_size", &O::sample_size)
          .range(0, kMaxSampleSize).config("global.samples_size").cli("samples-size")
          .describe("", GEODL_TR("The samples' size, checked against the stores (0: not checked).")),
      option("num_classes", &O::num_classes)
          .range(0, 255).config("global.num_classes").cli("num-classes")
          .describe("", GEODL_TR("Classes, background included, checked against the stores (0: the stores').")),
      option("bands", &O::bands)
          .range(0, 10000).config("global.number_of_bands").cli("number-of-bands")
          .describe("", GEODL_TR("Bands, checked against the stores (0: the stores').")),
      option<O>("wavelengths", OptionType::List,
                [](O& o, const OptionInput& v) {
                  o.wavelengths.clear();
                  for (const auto& w : v.list) o.wavelengths.push_back(std::stod(w));
                },
                [](const O& o) {  // comma-separated, as lists show (empty: none)
                  std::vector<std::string> w;
                  for (double x : o.wavelengths) w.push_back(optionText(x));
                  return optionText(w);
                })
          .numbersToo().range(kMinWavelength, kMaxWavelength)
          .config("model.wavelengths", {"models.*.wavelengths"}).cli("wavelengths").qgis("WAVELENGTHS", true)
          .describe(GEODL_TR("Band wavelengths (micrometres)"),
                    GEODL_TR("The central wavelength of each band, in the bands' order, e.g. 0.665,0.56,0.49 "
                             "for red, green, blue. DOFA needs them (empty: the rasters' band metadata, "
                             "where it has them); other models record them.")),
  };
}

// The optimization: epochs, batches, learning rate and its schedule, weights, augmentation.
OptionTable<O> optimizationOptions() {
  return {
      option("epochs", &O::epochs)
          .range(1, 100000).config("training.num_epochs").cli("epochs").qgis("EPOCHS")
          .describe(GEODL_TR("Epochs"), GEODL_TR("Passes over the training samples, e.g. 50-200.")),
      option("batch_size", &O::batch_size)
          .range(0, kMaxBatchSize).zeroWord("auto").config("training.batch_size").cli("batch-size").qgis("BATCH_SIZE")
          .minimumReads(GEODL_TR("Largest that fits"))
          .describe(GEODL_TR("Batch size"),
                    GEODL_TR("Samples per step; 0 or auto: the largest that fits the memory budget.")),
      option("optimizer", &O::optimizer)
          .oneOf({{"adam", GEODL_TR("Adam")}, {"adamw", GEODL_TR("AdamW (decoupled weight decay)")},
                  {"sgd", GEODL_TR("SGD with momentum")}})
          .config("training.optimizer").cli("optimizer").qgis("OPTIMIZER", true)
          .describe(GEODL_TR("Optimizer"),
                    GEODL_TR("adam; adamw (weight decay decoupled from the gradient); sgd (with momentum, "
                             "optionally Nesterov's).")),
      option("learning_rate", &O::learning_rate)
          .range(1e-9, 10).config("training.learning_rate").cli("learning-rate").qgis("LEARNING_RATE")
          .describe(GEODL_TR("Learning rate"),
                    GEODL_TR("The optimizer's learning rate (onecycle: its peak), typically 0.0001 for adam, "
                             "0.01 for sgd.")),
      option("weight_decay", &O::weight_decay)
          .range(0, 1).config("training.weight_decay").cli("weight-decay").qgis("WEIGHT_DECAY", true)
          .describe(GEODL_TR("Weight decay"),
                    GEODL_TR("An L2 penalty on the weights (adam, sgd), or decoupled weight decay (adamw).")),
      option("momentum", &O::momentum)
          .range(0, 0.999).config("training.momentum").cli("momentum").qgis("MOMENTUM", true)
          .describe(GEODL_TR("Momentum (sgd)"), GEODL_TR("SGD's momentum.")),
      option("nesterov", &O::nesterov)
          .config("training.nesterov").cli("nesterov").qgis("NESTEROV", true)
          .describe(GEODL_TR("Nesterov momentum (sgd)"), GEODL_TR("SGD with Nesterov's momentum.")),
      option("scheduler", &O::scheduler)
          .oneOf({{"step", GEODL_TR("Step (x gamma every step_size epochs)")},
                  {"cosine", GEODL_TR("Cosine annealing")},
                  {"onecycle", GEODL_TR("One cycle")},
                  {"plateau", GEODL_TR("Reduce on plateau")}})
          .config("training.scheduler").cli("scheduler").qgis("SCHEDULER", true)
          .describe(GEODL_TR("Learning rate schedule"),
                    GEODL_TR("step: x gamma every step_size epochs; cosine: down to 0 along half a cosine; "
                             "onecycle: up from a 25th of the rate to the rate, then down to 1/250000 of it; "
                             "plateau: x gamma after step_size epochs without a lower validation loss. Set "
                             "each optimizer step.")),
      option("step_size", &O::step_size)
          .range(1, 100000).config("training.step_size").cli("step-size").qgis("STEP_SIZE", true)
          .describe(GEODL_TR("Learning rate step (epochs)"),
                    GEODL_TR("step: the learning rate is multiplied by gamma every step_size epochs; plateau: "
                             "after step_size epochs without progress.")),
      option("gamma", &O::gamma)
          .range(1e-6, 10).config("training.gamma").cli("gamma").qgis("GAMMA", true)
          .describe(GEODL_TR("Learning rate factor per step (gamma)"),
                    GEODL_TR("What the learning rate is multiplied by at each step (step, plateau).")),
      option("warmup_epochs", &O::warmup_epochs)
          .range(0, 100000).config("training.warmup_epochs").cli("warmup-epochs").qgis("WARMUP_EPOCHS", true)
          .describe(GEODL_TR("Warm-up (epochs)"),
                    GEODL_TR("The learning rate rises linearly from 0 over these epochs' steps (onecycle: "
                             "its rise; 0: 30% of the run).")),
      option<O>("class_weights", OptionType::Choice,
                [](O& o, const OptionInput& v) {
                  o.class_weights.clear();
                  if (!v.list.empty()) {
                    o.class_weighting = ClassWeighting::Given;
                    for (const auto& w : v.list) o.class_weights.push_back(std::stod(w));
                  } else {
                    o.class_weighting = v.text == "auto" ? ClassWeighting::Auto : ClassWeighting::None;
                  }
                },
                [](const O& o) -> std::string {
                  if (o.class_weighting == ClassWeighting::Auto) return "auto";
                  if (o.class_weighting == ClassWeighting::None) return "false";
                  std::vector<std::string> w;
                  for (double x : o.class_weights) w.push_back(optionText(x));
                  return "[" + optionText(w) + "]";
                })
          .oneOf({{"false", GEODL_TR("None")}, {"auto", GEODL_TR("Automatic (inverse class frequency)")}})
          .numbersToo().config("training.class_weights").cli("class-weights").qgis("CLASS_WEIGHTS", true)
          .describe(GEODL_TR("Class weights"),
                    GEODL_TR("false: every class weighs the same; auto: inverse class frequency in the training "
                             "samples, to help rare classes; or a list with one weight per class.")),
      option("loss", &O::loss)
          .oneOf({{"cross_entropy", GEODL_TR("Cross-entropy"), {"CrossEntropy"}},
                  {"dice", GEODL_TR("Dice"), {"Dice"}},
                  {"focal", GEODL_TR("Focal"), {"Focal"}},
                  {"lovasz", GEODL_TR("Lovász-Softmax"), {"Lovasz"}},
                  {"ce_dice", GEODL_TR("Cross-entropy + Dice")},
                  {"ohem_ce", GEODL_TR("Cross-entropy on the hard pixels (OHEM)"), {"OhemCrossEntropy"}}})
          .config("training.loss_fn", {"training.loss"}).cli("loss").qgis("LOSS", true)
          .describe(GEODL_TR("Loss"),
                    GEODL_TR("What training minimises: cross_entropy; dice (1 - soft Dice, per class); focal "
                             "(cross-entropy weighted by (1 - p)^2, for hard pixels); lovasz (a surrogate of "
                             "1 - IoU); ce_dice (their sum); ohem_ce (cross-entropy on the pixels predicted "
                             "at most 70% right, and at least the 100000 hardest).")),
      option("checkpoint", &O::checkpoint)
          // In QGIS a checkbox (optional; unset: auto), as before: older models keep their values.
          .oneOf({{"false", GEODL_TR("Off")}, {"true", GEODL_TR("On")},
                  {"auto", GEODL_TR("Automatic (on when the batch needs it)")}})
          .bareFlag("true").config("training.checkpoint", {"models.*.checkpoint"}).cli("checkpoint")
          .qgis("CHECKPOINT", true)
          .describe(checkpointTexts().label,
                    GEODL_TR("Recompute activations in backward: about twice the batch for some 10-30% more "
                             "time. auto: on only when the batch would not fit the memory budget without it.")),
      option("dropout", &O::dropout)
          .config("models.*.dropout").cli("dropout").qgis("DROPOUT", true)
          .describe(GEODL_TR("Dropout"), GEODL_TR("Dropout in the UNets' blocks.")),
      option("dropout_probability", &O::dropout_probability)
          .range(0, 0.99).config("models.*.probability").cli("dropout-probability").qgis("DROPOUT_PROBABILITY", true)
          .describe(GEODL_TR("Dropout probability"), GEODL_TR("The probability of dropout, with dropout.")),
      option("pretrained", &O::pretrained)
          .path().config("models.*.pretrained").cli("pretrained").qgis("PRETRAINED", true)
          .describe(GEODL_TR("Pretrained weights"),
                    GEODL_TR("A GeoDL model file to fine-tune, a torch.save'd state dict, or VGG11 weights for "
                             "ternausnet (False: none).")),
      option("pretrained_encoder", &O::pretrained_encoder)
          .path().config("training.pretrained_encoder", {"models.*.pretrained_encoder"}).cli("pretrained-encoder")
          .qgis("PRETRAINED_ENCODER", true)
          .describe(GEODL_TR("Pretrained encoder"),
                    GEODL_TR("Weights for the encoder (torch.save or safetensors): torchvision's ResNet (or a "
                             "whole DeepLabV3) for resnet* and deeplabv3*, a Mix Transformer for segformer_*, "
                             "TorchGeo's DOFA for dofa_*; other than 3 bands adapt a ResNet's or Mix "
                             "Transformer's first convolution.")),
      option("encoder_freeze_epochs", &O::encoder_freeze_epochs)
          .range(0, 100000).config("training.encoder_freeze_epochs").cli("encoder-freeze-epochs")
          .qgis("ENCODER_FREEZE_EPOCHS", true)
          .describe(GEODL_TR("Epochs with the encoder frozen"),
                    GEODL_TR("The encoder's weights stay as they are for the first N epochs (its learning "
                             "rate is 0) while the decoder learns.")),
      option("encoder_lr_factor", &O::encoder_lr_factor)
          .range(0, 100).config("training.encoder_lr_factor").cli("encoder-lr-factor").qgis("ENCODER_LR_FACTOR", true)
          .describe(GEODL_TR("Encoder learning rate factor"),
                    GEODL_TR("The encoder's learning rate is the schedule's times this, e.g. 0.1 for a "
                             "pretrained encoder.")),
      augmentation("rotate_limit", &Augmentation::rotate_limit)
          .range(0, 180).cli("rotate-limit").qgis("ROTATE_LIMIT", true)
          .describe(GEODL_TR("Random rotation limit (degrees)"),
                    GEODL_TR("Training samples are rotated by up to this many degrees.")),
      augmentation("rotate_prob", &Augmentation::rotate_prob)
          .range(0, 1).cli("rotate-prob").qgis("ROTATE_PROB", true)
          .describe(GEODL_TR("Rotation probability"), GEODL_TR("The probability of a random rotation.")),
      augmentation("hflip_prob", &Augmentation::hflip_prob)
          .range(0, 1).cli("hflip-prob").qgis("HFLIP_PROB", true)
          .describe(GEODL_TR("Horizontal flip probability"),
                    GEODL_TR("The probability of a horizontal flip.")),
      augmentation("vflip_prob", &Augmentation::vflip_prob)
          .range(0, 1).cli("vflip-prob").qgis("VFLIP_PROB", true)
          .describe(GEODL_TR("Vertical flip probability"), GEODL_TR("The probability of a vertical flip.")),
      option("num_trn_samples", &O::num_trn_samples)
          .range(0, 1e12).config("training.num_trn_samples").cli("num-trn-samples").qgis("NUM_TRN_SAMPLES", true)
          .minimumReads(GEODL_TR("All"))
          .describe(GEODL_TR("Training samples to use"),
                    GEODL_TR("Only the first N training samples (0: all).")),
      option("num_val_samples", &O::num_val_samples)
          .range(0, 1e12).config("training.num_val_samples").cli("num-val-samples").qgis("NUM_VAL_SAMPLES", true)
          .minimumReads(GEODL_TR("All"))
          .describe(GEODL_TR("Validation samples to use"),
                    GEODL_TR("Only the first N validation samples (0: all).")),
  };
}

// The run: when it stops, what it keeps, reproducibility, hardware, outputs.
OptionTable<O> runOptions() {
  return {
      option("patience", &O::patience)
          .range(0, 100000).config("training.patience").cli("patience").qgis("PATIENCE", true)
          .minimumReads(GEODL_TR("Off"))
          .describe(GEODL_TR("Early stopping patience (epochs)"),
                    GEODL_TR("Stop when the best metric has not improved for this many epochs (0: never).")),
      option("best_metric", &O::best_metric)
          .oneOf({{"loss", GEODL_TR("Validation loss")}, {"miou", GEODL_TR("Mean IoU")}})
          .config("training.best_metric").cli("best-metric").qgis("BEST_METRIC", true)
          .describe(GEODL_TR("Best model by"),
                    GEODL_TR("What picks the best model: the lowest validation loss or the highest mean IoU.")),
      option("seed", &O::seed)
          .range(-1, 2147483647).config("training.seed", {"global.seed"}).cli("seed").qgis("SEED", true)
          .minimumReads(GEODL_TR("Random"))
          .describe(GEODL_TR("Random seed"),
                    GEODL_TR("The seed of initialization, order and augmentation (-1: a random one, recorded).")),
      option("deterministic", &O::deterministic)
          .config("training.deterministic").cli("deterministic").qgis("DETERMINISTIC", true)
          .describe(GEODL_TR("Deterministic"),
                    GEODL_TR("Deterministic algorithms: the same seed gives the same losses and weights.")),
      option("sync_batchnorm", &O::sync_batchnorm)
          .config("training.sync_batchnorm").cli("sync-batchnorm")
          .describe("", GEODL_TR("Data-parallel training: BatchNorm computes its batch statistics over all ranks' "
                                 "batches (as one process with the global batch would), not each rank's own.")),
      option("backend", &O::backend)
          .oneOf({{"auto", "auto"}, {"nccl", "nccl"}, {"gloo", "gloo"}})
          .config("training.backend").cli("backend")
          .describe("", GEODL_TR("Data-parallel training: the collectives' library. auto is NCCL on GPUs (the "
                                 "CUDA build) and Gloo on CPUs; gloo also joins GPUs, through the CPU.")),
      option("loader_threads", &O::loader_threads)
          .range(0, 256).config("training.loader_threads").cli("loader-threads")
          .describe("", GEODL_TR("Background threads preparing batches (0: automatic).")),
      option("bf16", &O::bf16)
          .config("training.bf16").cli("bf16").qgis("BF16", true)
          .describe(GEODL_TR("bfloat16 autocast (precision bf16)"),
                    GEODL_TR("The same as precision bf16 (kept for older configs and models).")),
      option("resume", &O::resume)
          .cli("resume").qgis("RESUME", true)
          .describe(GEODL_TR("Resume from the checkpoint in the model's folder"),
                    GEODL_TR("Continue from last_checkpoint.pt in the output folder (after a stop or a crash), "
                             "or extend a finished run with more epochs.")),
      option<O>("model_path", OptionType::Path,
                [](O& o, const OptionInput& v) {
                  o.model_path = v.text;
                  o.output_folder = fs::path(v.text).parent_path().string();
                })
          .qgis("OUTPUT_MODEL").declaredByPlugin()
          .describe(GEODL_TR("Model file"),
                    GEODL_TR("The trained model with everything classification needs; last_checkpoint.pt, "
                             "metrics.csv and report.html go beside it.")),
  };
}

}  // namespace

const OptionTable<TrainOptions>& trainOptionTable() {
  static const OptionTable<O> table = [] {
    OptionTable<O> all = dataAndModelOptions();
    for (auto part : {optimizationOptions(), runOptions(), runOptionTable(&O::run, "training", RunOptionSet::Computing)})
      all.insert(all.end(), part.begin(), part.end());
    return all;
  }();
  return table;
}

}  // namespace geodl
