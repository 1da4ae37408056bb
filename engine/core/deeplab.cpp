#include "core/deeplab.h"

#include "core/checkpoint.h"

namespace geodl {

namespace nn = torch::nn;
using torch::Tensor;
using resnet_ops::convBn;
using resnet_ops::convBnRelu;
using resnet_ops::convBnReluUnit;

namespace {

constexpr int64_t kAsppChannels = 256;

nn::Conv2d conv3x3NoBias(int64_t in, int64_t out) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, 3).padding(1).bias(false));
}

// Bilinear resize to height x width.
Tensor resize(const Tensor& x, int64_t height, int64_t width, bool align_corners) {
  if (x.size(2) == height && x.size(3) == width) return x;
  return torch::upsample_bilinear2d(x, {height, width}, align_corners);
}

}  // namespace

AsppImpl::AsppImpl(int64_t in, const std::vector<int64_t>& rates, int64_t out) {
  convs = register_module("convs", nn::ModuleList());
  convs->push_back(convBnReluUnit(in, out, 1));
  for (const int64_t rate : rates) convs->push_back(convBnReluUnit(in, out, 3, rate));
  // The image pooling: torchvision's ASPPPooling (0: the pooling, 1 conv, 2 BatchNorm, 3 ReLU).
  convs->push_back(nn::Sequential(nn::AdaptiveAvgPool2d(1), nn::Conv2d(nn::Conv2dOptions(in, out, 1).bias(false)),
                                  nn::BatchNorm2d(out), nn::ReLU()));
  project = register_module(
      "project", nn::Sequential(nn::Conv2d(nn::Conv2dOptions(out * int64_t(rates.size() + 2), out, 1).bias(false)),
                                nn::BatchNorm2d(out), nn::ReLU(), nn::Dropout(0.5)));
}

Tensor AsppImpl::forward(const Tensor& x, bool fused) {
  std::vector<Tensor> branches;
  const size_t n = convs->size();
  for (size_t i = 0; i + 1 < n; ++i) branches.push_back(convBnRelu(nn::Sequential(convs->ptr<nn::SequentialImpl>(i)), x, fused));
  const auto pooling = convs->ptr<nn::SequentialImpl>(n - 1);
  const Tensor pooled = convBn(torch::adaptive_avg_pool2d(x, {1, 1}), *pooling->ptr(1)->as<nn::Conv2dImpl>(),
                               *pooling->ptr(2)->as<nn::BatchNorm2dImpl>(), fused)
                            .relu_();
  branches.push_back(resize(pooled, x.size(2), x.size(3), false));
  Tensor h = convBnRelu(project, torch::cat(branches, 1), fused);
  branches.clear();
  return torch::dropout(h, 0.5, is_training());
}

DeepLabV3Impl::DeepLabV3Impl(const ResNetModelOptions& opts) : ResNetSegmenterImpl(opts, "backbone", 8, 1) {
  const int64_t deep = encoder->channels().back();
  classifier = register_module("classifier", std::make_shared<nn::Module>());
  aspp = classifier->register_module("0", Aspp(deep, std::vector<int64_t>{12, 24, 36}));
  conv = classifier->register_module("1", conv3x3NoBias(kAsppChannels, kAsppChannels));
  bn = classifier->register_module("2", nn::BatchNorm2d(kAsppChannels));
  final = classifier->register_module("4", nn::Conv2d(nn::Conv2dOptions(kAsppChannels, options.classes(), 1)));
}

Tensor DeepLabV3Impl::decode(std::vector<Tensor>& features, int64_t height, int64_t width, bool lean, bool fused) {
  const Tensor deep = features[4];
  features.clear();
  const Tensor h = checkpointedIf(
      lean,
      [this, fused](const std::vector<Tensor>& in) {
        return convBn(aspp->forward(in[0], fused), *conv, *bn, fused).relu_();
      },
      {deep}, *classifier);
  return resize(final->forward(h), height, width, false);
}

DeepLabV3PlusDecoderImpl::DeepLabV3PlusDecoderImpl(int64_t deep_channels, int64_t low_channels) {
  aspp = register_module("aspp", std::make_shared<nn::Module>());
  aspp_module = aspp->register_module("0", Aspp(deep_channels, std::vector<int64_t>{6, 12, 18}));
  aspp_conv = aspp->register_module("1", conv3x3NoBias(kAsppChannels, kAsppChannels));
  aspp_bn = aspp->register_module("2", nn::BatchNorm2d(kAsppChannels));
  constexpr int64_t low_out = 48;  // the paper's
  block1 = register_module("block1", convBnReluUnit(low_channels, low_out, 1));
  block2 = register_module("block2", convBnReluUnit(kAsppChannels + low_out, kAsppChannels, 3));
  refinement = std::make_shared<nn::Module>();
  refinement->register_module("block1", block1);
  refinement->register_module("block2", block2);
}

DeepLabV3PlusImpl::DeepLabV3PlusImpl(const ResNetModelOptions& opts) : ResNetDecoderHeadImpl(opts, 16, 16) {
  const auto channels = encoder->channels();
  registerDecoderHead(DeepLabV3PlusDecoder(channels[4], channels[1]),
                      nn::Sequential(nn::Conv2d(nn::Conv2dOptions(kAsppChannels, options.classes(), 1))));
}

Tensor DeepLabV3PlusImpl::decode(std::vector<Tensor>& features, int64_t height, int64_t width, bool lean,
                                 bool fused) {
  const Tensor deep = features[4], low = features[1];
  features.clear();
  auto* d = decoder.get();
  Tensor context = checkpointedIf(
      lean,
      [d, fused](const std::vector<Tensor>& in) {
        return convBn(d->aspp_module->forward(in[0], fused), *d->aspp_conv, *d->aspp_bn, fused).relu_();
      },
      {deep}, *d->aspp);
  context = resize(context, low.size(2), low.size(3), true);
  const Tensor refined = checkpointedIf(
      lean,
      [d, fused](const std::vector<Tensor>& in) {
        return convBnRelu(d->block2, torch::cat({in[0], convBnRelu(d->block1, in[1], fused)}, 1), fused);
      },
      {context, low}, *d->refinement);
  return resize(segmentation_head->ptr(0)->as<nn::Conv2dImpl>()->forward(refined), height, width, true);
}

}  // namespace geodl
