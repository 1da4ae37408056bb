// DeepLabV3 and DeepLabV3+ on a ResNet-50 encoder (deeplabv3_resnet50,
// deeplabv3plus_resnet50).
//
// deeplabv3_resnet50 is torchvision's deeplabv3_resnet50 without its auxiliary head, with
// its names (backbone.*, classifier.*): the ResNet-50 at output stride 8 (layer3 dilated 2,
// layer4 4, torchvision's replace_stride_with_dilation), then classifier = ASPP(2048, rates
// 12/24/36), conv 3x3 256 (no bias), BatchNorm, ReLU, conv 1x1 to the classes; the logits
// resized bilinearly (align_corners false) to the input's size. Any input size (as
// torchvision: nothing is padded).
//
// ASPP (torchvision's, smp's too): five branches of 256 channels, concatenated: conv 1x1,
// three conv 3x3 dilated by the rates (padding = rate), each with BatchNorm and ReLU, and
// the image pooling (global average, conv 1x1, BatchNorm, ReLU, resized back bilinearly);
// then project = conv 1x1 to 256, BatchNorm, ReLU, dropout 0.5 (training only). Names
// convs.0-4 (convs.4.1: the pooling's conv) and project.0-1.
//
// deeplabv3plus_resnet50 follows segmentation-models-pytorch's DeepLabV3Plus, with smp's
// names (encoder.*, decoder.*, segmentation_head.0) and the paper's rates for output
// stride 16 (layer4 dilated 2): decoder.aspp = ASPP(2048, rates 6/12/18), conv 3x3 256,
// BatchNorm, ReLU; upsampled x4 (bilinear, align_corners true) to layer1's stride 4;
// decoder.block1 = conv 1x1 from layer1's 256 channels to 48, BatchNorm, ReLU;
// concatenated; decoder.block2 = conv 3x3 to 256, BatchNorm, ReLU (the refinement); the
// head a conv 1x1 to the classes, upsampled x4 (bilinear, align_corners true). Plain
// convolutions where smp uses depthwise-separable ones (the paper's ResNet variant).
// Inputs are padded to multiples of 16, the logits cropped back.
//
// Both checkpoint each encoder stage, the ASPP and each decoder part, and infer on the CPU
// with every BatchNorm folded, channels last (ResNetSegmenterImpl).
#pragma once

#include <torch/torch.h>

#include <memory>
#include <vector>

#include "core/resnet_unet.h"

namespace geodl {

struct AsppImpl : torch::nn::Module {
  AsppImpl(int64_t in, const std::vector<int64_t>& rates, int64_t out = 256);
  torch::Tensor forward(const torch::Tensor& x, bool fused = false);
  torch::nn::ModuleList convs{nullptr};
  torch::nn::Sequential project{nullptr};
};
TORCH_MODULE(Aspp);

struct DeepLabV3Impl : ResNetSegmenterImpl {
  explicit DeepLabV3Impl(const ResNetModelOptions& options);
  // classifier: 0 the ASPP, 1 conv 3x3, 2 BatchNorm, (3 ReLU), 4 conv 1x1.
  std::shared_ptr<torch::nn::Module> classifier;
  Aspp aspp{nullptr};
  torch::nn::Conv2d conv{nullptr}, final{nullptr};
  torch::nn::BatchNorm2d bn{nullptr};

 protected:
  torch::Tensor decode(std::vector<torch::Tensor>& features, int64_t height, int64_t width, bool lean,
                       bool fused) override;
  bool readsFeature(int stage) const override { return stage == 4; }
};

struct DeepLabV3PlusDecoderImpl : torch::nn::Module {
  DeepLabV3PlusDecoderImpl(int64_t deep_channels, int64_t low_channels);
  // aspp: 0 the ASPP, 1 conv 3x3, 2 BatchNorm, (3 ReLU); block1, block2: conv, BatchNorm, ReLU.
  std::shared_ptr<torch::nn::Module> aspp;
  Aspp aspp_module{nullptr};
  torch::nn::Conv2d aspp_conv{nullptr};
  torch::nn::BatchNorm2d aspp_bn{nullptr};
  torch::nn::Sequential block1{nullptr}, block2{nullptr};
  // block1 and block2, not registered (their names stay the decoder's): what the
  // refinement's checkpoint restores and differentiates.
  std::shared_ptr<torch::nn::Module> refinement;
};
TORCH_MODULE(DeepLabV3PlusDecoder);

struct DeepLabV3PlusImpl : ResNetDecoderHeadImpl<DeepLabV3PlusDecoder> {
  explicit DeepLabV3PlusImpl(const ResNetModelOptions& options);

 protected:
  torch::Tensor decode(std::vector<torch::Tensor>& features, int64_t height, int64_t width, bool lean,
                       bool fused) override;
  bool readsFeature(int stage) const override { return stage == 1 || stage == 4; }
};

}  // namespace geodl
