// UNet and UNet++ on a ResNet encoder (resnet18_unet, resnet34_unet, resnet50_unet,
// resnet34_unetplusplus): torchvision's ResNet, its layout and parameter names, with
// segmentation-models-pytorch's UNet or UNet++ decoder. The DeepLabs (core/deeplab.h) share
// the encoder and ResNetSegmenterImpl.
//
// Encoder (torchvision's resnet18/34/50 without avgpool and fc): conv1 7x7 stride 2, bn1,
// ReLU (stride 2, 64 channels); maxpool 3x3 stride 2 and layer1; layer2, layer3, layer4
// (strides 4, 8, 16, 32). BasicBlocks (18: 2-2-2-2, 34: 3-4-6-3) or Bottlenecks (50:
// 3-4-6-3, expansion 4, the stride in the 3x3 convolution): features of 64-64-128-256-512
// or 64-256-512-1024-2048 channels.
//
// Decoder (smp's UnetDecoder, decoder channels 256-128-64-32-16, no centre, no attention):
// block i takes x (the deepest features first), upsamples it x2 by nearest neighbour,
// concatenates the skip of that resolution (layer3, layer2, layer1, the stem; none for the
// last) and applies twice conv 3x3 (no bias), BatchNorm, ReLU. The head is a 3x3
// convolution to the classes. Names follow smp's Unet: encoder.*, decoder.blocks.N.conv1.0
// (conv), .conv1.1 (BatchNorm), conv2 likewise, segmentation_head.0.
//
// UNet++ (resnet34_unetplusplus) has smp's UnetPlusPlusDecoder instead (see below).
//
// Inputs whose sides are not multiples of 32 are padded by reflection to the next multiple
// and the logits cropped back. Checkpointing recomputes each encoder stage and decoder
// block in backward. Inference on the CPU folds every BatchNorm into its convolution and
// runs channels last.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

#include "core/checkpoint.h"
#include "core/models.h"

namespace geodl {

// Residual blocks, torchvision's: conv1, bn1, conv2, bn2 (, conv3, bn3), downsample.
// `dilation` dilates the 3x3 convolution (torchvision's Bottleneck; BasicBlocks take 1).
struct ResNetBlockImpl : torch::nn::Module {
  ResNetBlockImpl(int64_t in, int64_t planes, int64_t stride, bool bottleneck, int64_t dilation = 1);
  torch::Tensor forward(const torch::Tensor& x);
  // The same with each BatchNorm folded into its convolution (inference).
  torch::Tensor fusedForward(const torch::Tensor& x);
  bool bottleneck = false;
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr}, conv3{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr}, bn2{nullptr}, bn3{nullptr};
  torch::nn::Sequential downsample{nullptr};  // conv 1x1 stride s, BatchNorm; or none
};
TORCH_MODULE(ResNetBlock);

// torchvision's ResNet without avgpool and fc. output_stride 16 or 8 replaces the stride of
// layer4 (and layer3) by dilation, as torchvision's replace_stride_with_dilation does: the
// layer's first block keeps the previous dilation, the others get twice (four times) it.
struct ResNetEncoderImpl : torch::nn::Module {
  ResNetEncoderImpl(int64_t in_channels, int depth, int output_stride = 32);  // depth 18, 34 or 50
  // The stem's and the four layers' features (strides 2, 4, 8, 16, 32 at output stride 32).
  std::vector<torch::Tensor> forward(const torch::Tensor& x);
  // Stage s (0: stem, 1-4: layers) alone; fused: BatchNorm folded (inference).
  torch::Tensor stage(int s, const torch::Tensor& x, bool fused = false);
  std::vector<int64_t> channels() const;  // of the five features
  int depth = 18;
  torch::nn::Conv2d conv1{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr};
  torch::nn::Sequential layer1{nullptr}, layer2{nullptr}, layer3{nullptr}, layer4{nullptr};
};
TORCH_MODULE(ResNetEncoder);

// smp's DecoderBlock: nearest x2, concatenation with the skip, two conv-BN-ReLU.
struct UnetDecoderBlockImpl : torch::nn::Module {
  UnetDecoderBlockImpl(int64_t in, int64_t skip, int64_t out);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& skip, bool fused = false);
  torch::nn::Sequential conv1{nullptr}, conv2{nullptr};  // Conv2d, BatchNorm2d, ReLU
};
TORCH_MODULE(UnetDecoderBlock);

// smp's UnetDecoder: its blocks, deepest first.
struct UnetDecoderImpl : torch::nn::Module {
  UnetDecoderImpl(const std::vector<int64_t>& encoder_channels, const std::vector<int64_t>& decoder_channels);
  torch::nn::ModuleList blocks{nullptr};
};
TORCH_MODULE(UnetDecoder);

// smp's UnetPlusPlusDecoder (decoder channels 256-128-64-32-16). With the encoder's
// features f0 (layer4) ... f4 (stem), deepest first, and skip widths s = (256, 128, 64, 64)
// for resnet34: node x_d_d = block(f_d, f_{d+1}) for d = 0..3; for l = 1..3 and
// d = 0..3-l, node x_d_{d+l} = block(x_d_{d+l-1}, cat(x_{d+1}_{d+l}, ..., x_{d+l}_{d+l},
// f_{d+l+1})); the last, x_0_4 = block(x_0_3) without skip. Every block is smp's
// DecoderBlock (nearest x2, concatenation, two conv-BN-ReLU); x_0_l outputs decoder
// channel l, the others s_l. Named decoder.blocks.x_d_l as in smp.
struct UnetPlusPlusDecoderImpl : torch::nn::Module {
  UnetPlusPlusDecoderImpl(const std::vector<int64_t>& encoder_channels, const std::vector<int64_t>& decoder_channels);
  UnetDecoderBlockImpl& block(int depth_index, int layer_index);
  std::shared_ptr<torch::nn::Module> blocks;  // x_d_l
  int depth = 4;
};
TORCH_MODULE(UnetPlusPlusDecoder);

struct ResNetModelOptions {
  ResNetModelOptions(int64_t in_channels, int64_t classes, int depth)
      : in_channels_(in_channels), classes_(classes), depth_(depth) {}
  TORCH_ARG(int64_t, in_channels);
  TORCH_ARG(int64_t, classes);
  TORCH_ARG(int, depth);
  TORCH_ARG(bool, checkpoint) = false;
};
using ResNetUNetOptions = ResNetModelOptions;

// What the models on a ResNet encoder share: the encoder (registered under the name their
// reference gives it), padding to a multiple of what the model needs (reflection, the
// logits cropped back), checkpointing of each encoder stage, the fused inference on the
// CPU (every BatchNorm folded into its convolution, channels last), and pretrained encoder
// weights. Subclasses decode the features.
struct ResNetSegmenterImpl : SegmentationModelImpl {
  ResNetSegmenterImpl(const ResNetModelOptions& options, const std::string& encoder_name, int output_stride,
                      int64_t pad_multiple);
  torch::Tensor forward(torch::Tensor images) final;
  void setCheckpointing(bool enabled) override { options.checkpoint(enabled); }
  bool checkpointing() const override { return options.checkpoint(); }
  std::vector<torch::Tensor> encoderParameters() override { return encoder->parameters(); }

  // Loads torchvision's ResNet weights into the encoder from a torch.save'd state dict (a
  // ResNet's, a whole DeepLabV3's under backbone., or smp's under encoder.; fc and
  // classifiers are left out). Every name and shape is checked: InputError names the first
  // missing or mismatched one. With other than 3 bands the first convolution is adapted
  // (see adaptFirstConvolution). Returns what the log says.
  std::vector<std::string> loadPretrainedEncoder(const std::string& path) override;

  ResNetModelOptions options;
  ResNetEncoder encoder{nullptr};

 protected:
  // The logits from the encoder's five features (those the model does not read may be
  // undefined), at the padded input's size `height` x `width`. lean: each block runs
  // checkpointed; fused: inference with BatchNorm folded.
  virtual torch::Tensor decode(std::vector<torch::Tensor>& features, int64_t height, int64_t width, bool lean,
                               bool fused) = 0;
  // Which of the five features decode() reads (the others are let go as soon as used).
  virtual bool readsFeature(int stage) const { return true; }

 private:
  int64_t pad_multiple_;
  // The stem's conv1 and bn1, not registered (their names stay the encoder's): what its
  // checkpoint restores and differentiates.
  std::shared_ptr<torch::nn::Module> stem_;
};

// segmentation-models-pytorch's layout of a model on a ResNet encoder: the encoder, a
// decoder and a segmentation head, registered under smp's names ("encoder", "decoder",
// "segmentation_head": the checkpoint keys). Subclasses build the decoder and head from the
// encoder's channels (registerDecoderHead) and decode.
template <class Decoder>
struct ResNetDecoderHeadImpl : ResNetSegmenterImpl {
  ResNetDecoderHeadImpl(const ResNetModelOptions& options, int output_stride, int64_t pad_multiple)
      : ResNetSegmenterImpl(options, "encoder", output_stride, pad_multiple) {}
  Decoder decoder{nullptr};
  torch::nn::Sequential segmentation_head{nullptr};

 protected:
  void registerDecoderHead(Decoder d, torch::nn::Sequential head) {
    decoder = this->register_module("decoder", std::move(d));
    segmentation_head = this->register_module("segmentation_head", std::move(head));
  }
};

// resnet18_unet, resnet34_unet, resnet50_unet (smp's Unet; inputs padded to multiples of 32).
struct ResNetUNetImpl : ResNetDecoderHeadImpl<UnetDecoder> {
  explicit ResNetUNetImpl(const ResNetModelOptions& options);

 protected:
  torch::Tensor decode(std::vector<torch::Tensor>& features, int64_t height, int64_t width, bool lean,
                       bool fused) override;
};

// resnet34_unetplusplus (smp's UnetPlusPlus; inputs padded to multiples of 32).
struct ResNetUNetPlusPlusImpl : ResNetDecoderHeadImpl<UnetPlusPlusDecoder> {
  explicit ResNetUNetPlusPlusImpl(const ResNetModelOptions& options);

 protected:
  torch::Tensor decode(std::vector<torch::Tensor>& features, int64_t height, int64_t width, bool lean,
                       bool fused) override;
};

namespace resnet_ops {
// bn(conv(x)); fused: one convolution with the BatchNorm folded in (inference), in the
// input's layout.
torch::Tensor convBn(const torch::Tensor& x, torch::nn::Conv2dImpl& conv, torch::nn::BatchNorm2dImpl& bn, bool fused);
// A Sequential of Conv2d, BatchNorm2d (and ReLU, ...): relu(bn(conv(x))).
torch::Tensor convBnRelu(const torch::nn::Sequential& unit, const torch::Tensor& x, bool fused);
// Conv2d (no bias, padding half the dilated kernel), BatchNorm2d, ReLU.
torch::nn::Sequential convBnReluUnit(int64_t in, int64_t out, int64_t kernel, int64_t dilation = 1);
}  // namespace resnet_ops

// Folds BatchNorm `bn` (its running statistics) into convolution `conv`: the weight and
// bias of the one convolution that computes bn(conv(x)) in inference.
std::pair<torch::Tensor, torch::Tensor> foldBatchNorm(const torch::nn::Conv2dImpl& conv,
                                                      const torch::nn::BatchNorm2dImpl& bn);

}  // namespace geodl
