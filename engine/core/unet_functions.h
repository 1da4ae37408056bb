// The UNet's operations, shared by the plain model and its checkpointed blocks, and the
// checkpointed blocks themselves: autograd functions that keep only a block's inputs and,
// in backward, recompute the block once and run its backward op by op, freeing every
// intermediate as soon as it is used.
#pragma once

#include <torch/torch.h>

#include "core/unet.h"

namespace geodl {

namespace unet_ops {
// The same ATen calls serve the plain model (through autograd) and the checkpointed
// blocks (by hand), so both compute exactly the same numbers.
// Reflection padding by 1 pixel; bfloat16 on the CPU padded in bfloat16, channels last.
torch::Tensor pad(const torch::Tensor& x);
// The gradient of pad's input from its output's gradient `grad` (bfloat16: summed in
// bfloat16, in the gradient's layout), returned in `input_type`.
torch::Tensor padBackward(const torch::Tensor& grad, at::IntArrayRef input_sizes, at::ScalarType input_type);
torch::Tensor conv(const torch::Tensor& x, const torch::nn::Conv2dImpl& conv);
torch::Tensor maxPool(const torch::Tensor& x);
torch::Tensor upsample2x(const torch::Tensor& x);
// The gradient of upsample2x's input (of `input_sizes`) from its output's gradient.
torch::Tensor upsample2xBackward(const torch::Tensor& grad, at::IntArrayRef input_sizes);
// Bilinear resize of x to like's height and width; x itself when they already match.
torch::Tensor resizeTo(const torch::Tensor& x, const torch::Tensor& like);
// Dropout as geo-deep-learning's nn.Dropout computes it: x * bernoulli(1-p) / (1-p).
torch::Tensor dropoutNoise(const torch::Tensor& like, double p);
// One unit with autograd: pad, conv, PReLU, BatchNorm (updates running stats), dropout.
torch::Tensor unitForward(const ConvUnit& unit, const torch::Tensor& x);
// The unit after its convolution, on the conv output y: PReLU, BatchNorm, dropout.
torch::Tensor unitActivation(const ConvUnit& unit, const torch::Tensor& y);

// Inference without autograd (CPU, float), in channels-last layout, where oneDNN's
// convolutions and max-pooling are fastest: the unit's PReLU and BatchNorm (running
// statistics) in one pass over its convolution's output y. With `padded`, written into a
// new tensor with a 1-pixel reflected border, the next convolution's input (one pass
// instead of three: PReLU, BatchNorm, padding); otherwise in place.
torch::Tensor activate(const ConvUnit& unit, torch::Tensor y, bool padded);
// x with a 1-pixel reflected border, channels last.
torch::Tensor padChannelsLast(const torch::Tensor& x);
// Fills the 1-pixel border of p (N, C, H+2, W+2) by reflecting its interior.
void reflectBorder(torch::Tensor& p);
// Whether activate() serves x (CPU float or bfloat16 tensors); other devices use the plain ops.
bool fusedInference(const torch::Tensor& x);
}  // namespace unet_ops

// Encoder block (max-pooling its input first when `pool`), checkpointed: only the block's
// input is kept, and backward recomputes the block. With keep_convs, each unit's conv
// output is kept too, and backward recomputes only what follows the convolutions (PReLU,
// BatchNorm, dropout, padding, pooling: elementwise, cheap), never a 3x3 convolution.
torch::Tensor checkpointedEncoder(const torch::Tensor& x, EncodingBlockImpl& block, bool pool,
                                  bool keep_convs = false);
// Decoder block on (skip, x), checkpointed likewise (with keep_convs, backward recomputes
// the 1x1 convolution before the upsampling, and no 3x3 one).
torch::Tensor checkpointedDecoder(const torch::Tensor& skip, const torch::Tensor& x,
                                  DecodingBlockImpl& block, bool keep_convs = false);

}  // namespace geodl
