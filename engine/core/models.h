// The segmentation models' common base and the factory that builds one from a spec.
#pragma once

#include <torch/torch.h>

#include <memory>

#include "core/model_spec.h"

namespace geodl {

// Every architecture maps (N, bands, H, W) images to (N, classes, H, W) logits.
struct SegmentationModelImpl : torch::nn::Module {
  virtual torch::Tensor forward(torch::Tensor images) = 0;
  // Checkpointing can be switched at any time; it never changes the maths.
  virtual void setCheckpointing(bool enabled) = 0;
  virtual bool checkpointing() const = 0;
};
using SegmentationModel = std::shared_ptr<SegmentationModelImpl>;

// Builds the model a spec describes (validated first). TernausNet loads its pretrained
// encoder when spec.pretrained names a file.
SegmentationModel makeModel(const ModelSpec& spec);

}  // namespace geodl
