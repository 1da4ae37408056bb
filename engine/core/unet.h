// geo-deep-learning's UNet family (unet, unetsmall), with optional gradient checkpointing.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "core/models.h"

namespace geodl {

struct UNetOptions {
  UNetOptions(int64_t in_channels, int64_t classes) : in_channels_(in_channels), classes_(classes) {}
  TORCH_ARG(int64_t, in_channels);
  TORCH_ARG(int64_t, classes);
  // Encoder widths, the last one being the centre block's.
  TORCH_ARG(std::vector<int64_t>, widths) = {32, 64, 128, 256};
  TORCH_ARG(bool, dropout) = false;
  TORCH_ARG(double, probability) = 0.5;
  TORCH_ARG(bool, checkpoint) = false;
  // Training without checkpointing keeps each unit's conv output only and recomputes what
  // follows the convolutions in backward (same gradients, a fraction of the memory);
  // false: plain autograd, which keeps every intermediate (the tests' reference).
  TORCH_ARG(bool, recompute_activations) = true;
};

std::vector<int64_t> unetWidths();       // 64-128-256-512, centre 1024
std::vector<int64_t> unetSmallWidths();  // 32-64-128, centre 256

// One ReflectionPad(1) - Conv3x3 - PReLU [- BatchNorm] [- Dropout] unit, as views into
// the block's Sequential (which owns the modules and gives geo-deep-learning's names).
struct ConvUnit {
  torch::nn::Conv2dImpl* conv = nullptr;
  torch::nn::PReLUImpl* prelu = nullptr;
  torch::nn::BatchNorm2dImpl* bn = nullptr;  // null in decoder blocks
  double dropout = 0.0;                      // 0: no dropout
};

// Two conv units. Registered as `EncodingBlock` (a Sequential) like geo-deep-learning's.
struct EncodingBlockImpl : torch::nn::Module {
  EncodingBlockImpl(int64_t in, int64_t out, bool batch_norm, double dropout);
  // Plain autograd forward of the block (optionally max-pooling its input first).
  torch::Tensor forward(const torch::Tensor& x, bool pool);
  torch::nn::Sequential block{nullptr};
  std::vector<ConvUnit> units;
};
TORCH_MODULE(EncodingBlock);

// Bilinear x2 upsampling and a 1x1 conv (`up`), the skip resized and concatenated in
// front, then an EncodingBlock without BatchNorm (`conv`).
struct DecodingBlockImpl : torch::nn::Module {
  DecodingBlockImpl(int64_t in, int64_t out);
  torch::Tensor forward(const torch::Tensor& skip, const torch::Tensor& x);
  // The input of the block's units: the skip beside x upsampled (1x1 conv, then 2x).
  torch::Tensor unitsInput(const torch::Tensor& skip, const torch::Tensor& x);
  torch::nn::Sequential up{nullptr};
  torch::nn::Conv2dImpl* up_conv = nullptr;
  EncodingBlock conv{nullptr};
};
TORCH_MODULE(DecodingBlock);

struct UNetImpl : SegmentationModelImpl {
  explicit UNetImpl(const UNetOptions& options);
  torch::Tensor forward(torch::Tensor images) override;
  void setCheckpointing(bool enabled) override { options.checkpoint(enabled); }
  bool checkpointing() const override { return options.checkpoint(); }

  UNetOptions options;
  std::vector<EncodingBlock> encoders;  // conv1, conv2, ...
  EncodingBlock center{nullptr};
  std::vector<DecodingBlock> decoders;  // decoders[i] pairs with encoders[i]
  torch::nn::Conv2d final{nullptr};
};

}  // namespace geodl
