// TernausNet (UNet11): a VGG11 encoder with 32 base filters, optional pretrained encoder.
#pragma once

#include <torch/torch.h>

#include <string>

#include "core/models.h"

namespace geodl {

struct TernausNetOptions {
  TernausNetOptions(int64_t in_channels, int64_t classes)
      : in_channels_(in_channels), classes_(classes) {}
  TORCH_ARG(int64_t, in_channels);
  TORCH_ARG(int64_t, classes);
  TORCH_ARG(int64_t, num_filters) = 32;
  TORCH_ARG(bool, dropout) = false;
  TORCH_ARG(double, probability) = 0.5;
  TORCH_ARG(bool, checkpoint) = false;
};

// ConvTranspose2d(3, stride 2, padding 1, output padding 1) computed as the equivalent
// plain convolution (which LibTorch runs through oneDNN); same weights, same maths.
torch::Tensor transposedConvAsConv(const torch::Tensor& x, const torch::nn::ConvTranspose2dImpl& t);

// Conv3x3 (zero padding 1) + ReLU, then ConvTranspose2d(3, stride 2) + ReLU: x2 upsampling.
struct TernausDecoderBlockImpl : torch::nn::Module {
  TernausDecoderBlockImpl(int64_t in, int64_t middle, int64_t out);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::Sequential block{nullptr};
};
TORCH_MODULE(TernausDecoderBlock);

struct TernausNetImpl : SegmentationModelImpl {
  explicit TernausNetImpl(const TernausNetOptions& options);
  torch::Tensor forward(torch::Tensor images) override;
  // forward() in inference on the CPU: the ReLUs in place and the skips let go early
  // (tested against the plain ops).
  torch::Tensor inferenceForward(const torch::Tensor& images);
  void setCheckpointing(bool enabled) override { options.checkpoint(enabled); }
  bool checkpointing() const override { return options.checkpoint(); }

  // Loads VGG11 `features` weights (keys 0.weight ... 18.bias) from a file written by
  // torch.save (see README). With other than 3 bands, the first convolution takes the RGB
  // filters for the first bands and their mean for the others. Throws InputError when a
  // key is missing or a shape does not fit.
  void loadVgg11Encoder(const std::string& path);

  TernausNetOptions options;
  // VGG11 features' convolutions, named by their index in torchvision's vgg11().features.
  torch::nn::Sequential encoder{nullptr};
  TernausDecoderBlock center{nullptr}, dec5{nullptr}, dec4{nullptr}, dec3{nullptr},
      dec2{nullptr};
  torch::nn::Sequential dec1{nullptr};
  torch::nn::Conv2d final{nullptr};
};

}  // namespace geodl
