// GeoDL model files: one LibTorch archive holding the weights and the ModelInfo (JSON),
// written atomically. Training checkpoints use the same format plus optimizer state.
#pragma once

#include <torch/torch.h>

#include <string>

#include "base/digest.h"
#include "model/model_info.h"
#include "core/models.h"

namespace geodl {

// Writes `path` through a temporary file in the same folder, flushed to disk and renamed:
// a crash at any moment leaves either the old file or the new one. `extra` entries (e.g.
// optimizer state) are written beside the model. Throws IoError.
// `what` names the file in messages.
void saveModelFile(const std::string& path, const ModelInfo& info, SegmentationModelImpl& model,
                   const std::function<void(torch::serialize::OutputArchive&)>& extra = {},
                   const std::string& what = "the model file");

struct LoadedModel {
  ModelInfo info;
  SegmentationModel model;  // on the CPU, in eval mode
  std::vector<std::string> warnings;  // e.g. a file from before weight digests
};

// Reads a model file (or a training checkpoint). Throws InputError when the file is not a
// GeoDL model, its weights do not fit its own description, or they differ from the digest
// written when it was saved ("the file is damaged"); files without a digest load with a
// warning.
LoadedModel loadModelFile(const std::string& path,
                          const std::function<void(torch::serialize::InputArchive&)>& extra = {});

// A digest of the weights (FNV-1a over every parameter and buffer in name order, as hex):
// equal digests mean bit-identical models.
std::string weightsDigest(SegmentationModelImpl& model);

// The pieces of such digests (base/digest.h), and a tensor's bytes (on the CPU) added to one.
void addToDigest(uint64_t& hash, const torch::Tensor& tensor);

// Initialises `model` from a pretrained file: a GeoDL model file, a torch.save'd state dict
// (an OrderedDict or a dict; under 'model' or 'state_dict' as in geo-deep-learning's and
// Lightning's checkpoints, its keys with or without a prefix such as "model."), or a
// safetensors file. Every parameter must be present with the same shape; otherwise
// InputError names the first that does not fit. Returns the warnings (a GeoDL model file
// without a digest, a prefix taken off).
std::vector<std::string> loadPretrainedWeights(SegmentationModelImpl& model, const std::string& path);

// A model for classification: a GeoDL model file, or a TorchScript segmentation module
// exported from PyTorch with a sidecar file describing it.
struct Predictor {
  ModelInfo info;
  // images (N, bands, H, W), normalized -> logits (N, classes, H, W)
  std::function<torch::Tensor(const torch::Tensor&)> forward;
  std::function<void(const torch::Device&)> to;
  // The weights cast once to `type` (kBFloat16 for bf16 inference; the inputs then too).
  std::function<void(torch::ScalarType)> cast;
  bool torchscript = false;
  std::vector<std::string> warnings;
};

// `path` is a GeoDL model file, or a TorchScript module (torch.jit.save) whose sidecar
// (`sidecar`, or else PATH-without-extension.json / .yaml / .yml beside it) gives, in JSON
// or YAML: bands, band_mean, band_std, classes (a list of names, or of {id, name, colour}),
// and optionally sample_size (default 256), data_type, ignore_index, pixel_size. Throws
// InputError naming what is missing.
Predictor loadPredictor(const std::string& path, const std::string& sidecar = "");

}  // namespace geodl
