// The segmentation models' common base and the factory that builds one from a spec.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "core/model_spec.h"

namespace geodl {

// Every architecture maps (N, bands, H, W) images to (N, classes, H, W) logits.
struct SegmentationModelImpl : torch::nn::Module {
  virtual torch::Tensor forward(torch::Tensor images) = 0;
  // Checkpointing can be switched at any time; it never changes the maths.
  virtual void setCheckpointing(bool enabled) = 0;
  virtual bool checkpointing() const = 0;
  // The pretrained-encoder part (its own learning rate, frozen for the first epochs);
  // empty for models without one.
  virtual std::vector<torch::Tensor> encoderParameters() { return {}; }
  // Loads the encoder's weights from a pretrained-encoder file (hasPretrainedEncoder models);
  // returns what the log says. InputError for the models without one.
  virtual std::vector<std::string> loadPretrainedEncoder(const std::string& path);
};

// `images` padded at the bottom and right to the next multiple of `multiple` on each side:
// by reflection where the image is large enough, else its edge repeated (the models whose
// encoders halve the size several times; their logits are cropped back).
torch::Tensor padToMultiple(const torch::Tensor& images, int64_t multiple);
using SegmentationModel = std::shared_ptr<SegmentationModelImpl>;

// The dict a file written by torch.save holds. InputError when the file cannot be read
// ("cannot read the <what> '<path>': check the path<where>"), is not torch.save's, or holds
// no dict ("'<path>' holds no dictionary of tensors; <fix>").
c10::Dict<c10::IValue, c10::IValue> readTorchSavedDict(const std::string& path, const std::string& what,
                                                       const std::string& where, const std::string& fix);

// Puts every 4-d parameter and buffer of `model` (the convolutions' weights) in channels-last
// order (NHWC strides), which cuDNN's tensor-core convolutions take without reordering: on a
// GPU the activations follow. Values, names and shapes stay; model files store the values.
void toChannelsLast(torch::nn::Module& model);

// Builds the model a spec describes (validated first). TernausNet loads its pretrained
// encoder when spec.pretrained names a file.
SegmentationModel makeModel(const ModelSpec& spec);

}  // namespace geodl
