#include "core/resnet_unet.h"

#include <cstring>
#include <map>
#include <sstream>
#include <stdexcept>

#include "base/errors.h"

#include "core/checkpoint.h"
#include "core/pretrained_encoder.h"
#include "core/unet_functions.h"

namespace geodl {

namespace nn = torch::nn;
using torch::Tensor;

namespace {

nn::Conv2d convNoBias(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t dilation = 1) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, kernel)
                        .stride(stride)
                        .padding(dilation * (kernel / 2))
                        .dilation(dilation)
                        .bias(false));
}

using resnet_ops::convBn;

Tensor runLayer(const nn::Sequential& layer, Tensor x, bool fused) {
  for (const auto& child : layer->children()) {
    auto* block = child->as<ResNetBlockImpl>();
    x = fused ? block->fusedForward(x) : block->forward(x);
  }
  return x;
}

// Blocks per layer of torchvision's resnet18, 34 and 50.
std::vector<int> layerBlocks(int depth) {
  if (depth == 18) return {2, 2, 2, 2};
  if (depth == 34 || depth == 50) return {3, 4, 6, 3};
  throw std::invalid_argument("ResNet depth must be 18, 34 or 50 (got " + std::to_string(depth) + ")");
}

}  // namespace

namespace resnet_ops {

// Every convolution here pads by half its dilated kernel.
Tensor convBn(const Tensor& x, nn::Conv2dImpl& conv, nn::BatchNorm2dImpl& bn, bool fused) {
  if (!fused) return bn.forward(conv.forward(x));
  auto [w, b] = foldBatchNorm(conv, bn);
  w = w.to(x.scalar_type());
  b = b.to(x.scalar_type());
  if (x.suggest_memory_format() == torch::MemoryFormat::ChannelsLast) w = w.contiguous(torch::MemoryFormat::ChannelsLast);
  const int64_t dilation = conv.options.dilation()->at(0);
  const int64_t pad = dilation * (conv.weight.size(2) / 2);
  return torch::conv2d(x, w, b, conv.options.stride(), {pad, pad}, {dilation, dilation});
}

Tensor convBnRelu(const nn::Sequential& unit, const Tensor& x, bool fused) {
  return convBn(x, *unit->ptr(0)->as<nn::Conv2dImpl>(), *unit->ptr(1)->as<nn::BatchNorm2dImpl>(), fused).relu_();
}

nn::Sequential convBnReluUnit(int64_t in, int64_t out, int64_t kernel, int64_t dilation) {
  return nn::Sequential(convNoBias(in, out, kernel, 1, dilation), nn::BatchNorm2d(out),
                        nn::ReLU(nn::ReLUOptions(true)));
}

}  // namespace resnet_ops

std::pair<Tensor, Tensor> foldBatchNorm(const nn::Conv2dImpl& conv, const nn::BatchNorm2dImpl& bn) {
  torch::NoGradGuard no_grad;
  const auto f = [](const Tensor& t) { return t.to(torch::kFloat); };
  const Tensor scale = f(bn.weight) / torch::sqrt(f(bn.running_var) + bn.options.eps());
  const Tensor weight = f(conv.weight) * scale.view({-1, 1, 1, 1});
  Tensor bias = f(bn.bias) - f(bn.running_mean) * scale;
  if (conv.bias.defined()) bias = bias + f(conv.bias) * scale;
  return {weight, bias};
}

ResNetBlockImpl::ResNetBlockImpl(int64_t in, int64_t planes, int64_t stride, bool is_bottleneck, int64_t dilation)
    : bottleneck(is_bottleneck) {
  if (!bottleneck && dilation > 1) throw std::invalid_argument("torchvision's BasicBlock has no dilation");
  const int64_t out = bottleneck ? planes * 4 : planes;
  conv1 = register_module("conv1", bottleneck ? convNoBias(in, planes, 1, 1) : convNoBias(in, planes, 3, stride));
  bn1 = register_module("bn1", nn::BatchNorm2d(planes));
  conv2 = register_module("conv2", convNoBias(planes, planes, 3, bottleneck ? stride : 1, dilation));
  bn2 = register_module("bn2", nn::BatchNorm2d(planes));
  if (bottleneck) {
    conv3 = register_module("conv3", convNoBias(planes, out, 1, 1));
    bn3 = register_module("bn3", nn::BatchNorm2d(out));
  }
  if (stride != 1 || in != out)
    downsample = register_module("downsample", nn::Sequential(convNoBias(in, out, 1, stride), nn::BatchNorm2d(out)));
}

namespace {

Tensor blockForward(ResNetBlockImpl& b, const Tensor& x, bool fused) {
  Tensor out = convBn(x, *b.conv1, *b.bn1, fused).relu_();
  if (b.bottleneck) {
    out = convBn(out, *b.conv2, *b.bn2, fused).relu_();
    out = convBn(out, *b.conv3, *b.bn3, fused);
  } else {
    out = convBn(out, *b.conv2, *b.bn2, fused);
  }
  const Tensor identity =
      b.downsample ? convBn(x, *b.downsample->ptr(0)->as<nn::Conv2dImpl>(),
                            *b.downsample->ptr(1)->as<nn::BatchNorm2dImpl>(), fused)
                   : x;
  return (out += identity).relu_();
}

}  // namespace

Tensor ResNetBlockImpl::forward(const Tensor& x) { return blockForward(*this, x, false); }
Tensor ResNetBlockImpl::fusedForward(const Tensor& x) { return blockForward(*this, x, true); }

ResNetEncoderImpl::ResNetEncoderImpl(int64_t in_channels, int resnet_depth, int output_stride)
    : depth(resnet_depth) {
  if (output_stride != 32 && output_stride != 16 && output_stride != 8)
    throw std::invalid_argument("a ResNet's output stride is 32, 16 or 8");
  const auto blocks = layerBlocks(depth);
  const bool bottleneck = depth == 50;
  conv1 = register_module("conv1", convNoBias(in_channels, 64, 7, 2));
  bn1 = register_module("bn1", nn::BatchNorm2d(64));
  int64_t in = 64, dilation = 1;
  nn::Sequential* layers[] = {&layer1, &layer2, &layer3, &layer4};
  for (int i = 0; i < 4; ++i) {
    const int64_t planes = int64_t(64) << i;
    // torchvision's _make_layer: a dilated layer's first block keeps the previous dilation.
    int64_t stride = i > 0 ? 2 : 1;
    const int64_t previous = dilation;
    const bool dilate = (i == 3 && output_stride <= 16) || (i == 2 && output_stride == 8);
    if (dilate) dilation *= stride, stride = 1;
    nn::Sequential layer;
    for (int b = 0; b < blocks[size_t(i)]; ++b) {
      layer->push_back(ResNetBlock(in, planes, b == 0 ? stride : 1, bottleneck, b == 0 ? previous : dilation));
      in = bottleneck ? planes * 4 : planes;
    }
    *layers[i] = register_module("layer" + std::to_string(i + 1), layer);
  }
}

std::vector<int64_t> ResNetEncoderImpl::channels() const {
  const int64_t e = depth == 50 ? 4 : 1;
  return {64, 64 * e, 128 * e, 256 * e, 512 * e};
}

Tensor ResNetEncoderImpl::stage(int s, const Tensor& x, bool fused) {
  switch (s) {
    case 0: return convBn(x, *conv1, *bn1, fused).relu_();
    case 1: return runLayer(layer1, torch::max_pool2d(x, 3, 2, 1), fused);
    case 2: return runLayer(layer2, x, fused);
    case 3: return runLayer(layer3, x, fused);
    case 4: return runLayer(layer4, x, fused);
  }
  throw std::out_of_range("a ResNet has stages 0 to 4");
}

std::vector<Tensor> ResNetEncoderImpl::forward(const Tensor& x) {
  std::vector<Tensor> features;
  Tensor h = x;
  for (int s = 0; s < 5; ++s) features.push_back(h = stage(s, h));
  return features;
}

UnetDecoderBlockImpl::UnetDecoderBlockImpl(int64_t in, int64_t skip, int64_t out) {
  conv1 = register_module("conv1", resnet_ops::convBnReluUnit(in + skip, out, 3));
  conv2 = register_module("conv2", resnet_ops::convBnReluUnit(out, out, 3));
}

Tensor UnetDecoderBlockImpl::forward(const Tensor& x, const Tensor& skip, bool fused) {
  Tensor h = torch::upsample_nearest2d(x, {2 * x.size(2), 2 * x.size(3)});
  if (skip.defined()) h = torch::cat({h, skip}, 1);
  return resnet_ops::convBnRelu(conv2, resnet_ops::convBnRelu(conv1, h, fused), fused);
}

UnetDecoderImpl::UnetDecoderImpl(const std::vector<int64_t>& enc, const std::vector<int64_t>& dec) {
  // Deepest first: block i takes the previous block's output (the last features for the
  // first) and the skip one stride up; the last block has none.
  blocks = register_module("blocks", nn::ModuleList());
  const std::vector<int64_t> skips = {enc[3], enc[2], enc[1], enc[0], 0};
  int64_t in = enc[4];
  for (size_t i = 0; i < dec.size(); ++i) {
    blocks->push_back(UnetDecoderBlock(in, skips[i], dec[i]));
    in = dec[i];
  }
}

UnetPlusPlusDecoderImpl::UnetPlusPlusDecoderImpl(const std::vector<int64_t>& enc, const std::vector<int64_t>& dec) {
  // smp's channels: the blocks' inputs (the deepest features, then the decoder's), the skips
  // (the encoder's, deepest first, none for the last).
  const std::vector<int64_t> in_channels = {enc[4], dec[0], dec[1], dec[2], dec[3]};
  const std::vector<int64_t> skip = {enc[3], enc[2], enc[1], enc[0], 0};
  depth = int(in_channels.size()) - 1;
  blocks = register_module("blocks", std::make_shared<nn::Module>());
  for (int l = 0; l < depth; ++l)
    for (int d = 0; d <= l; ++d) {
      const int64_t in = d == 0 ? in_channels[size_t(l)] : skip[size_t(l - 1)];
      const int64_t skips = skip[size_t(l)] * (l + 1 - d);
      const int64_t out = d == 0 ? dec[size_t(l)] : skip[size_t(l)];
      blocks->register_module("x_" + std::to_string(d) + "_" + std::to_string(l), UnetDecoderBlock(in, skips, out));
    }
  blocks->register_module("x_0_" + std::to_string(depth), UnetDecoderBlock(in_channels.back(), 0, dec.back()));
}

UnetDecoderBlockImpl& UnetPlusPlusDecoderImpl::block(int d, int l) {
  return *blocks->named_children()["x_" + std::to_string(d) + "_" + std::to_string(l)]->as<UnetDecoderBlockImpl>();
}

namespace {

// The stem's parameters for its checkpoint, without renaming them (encoder.conv1, .bn1).
struct StemImpl : nn::Module {
  StemImpl(nn::Conv2d conv, nn::BatchNorm2d bn) {
    register_module("conv1", std::move(conv));
    register_module("bn1", std::move(bn));
  }
};

constexpr int64_t kMultiple = 32;  // the UNets' encoder output stride
const std::vector<int64_t> kDecoderChannels = {256, 128, 64, 32, 16};

// smp's DecoderBlock on x and the concatenation of `inputs` after it (the skips).
Tensor decoderBlock(UnetDecoderBlockImpl& block, const std::vector<Tensor>& inputs, bool fused) {
  Tensor skip;
  if (inputs.size() == 2) skip = inputs[1];
  if (inputs.size() > 2) skip = torch::cat(at::TensorList(inputs).slice(1), 1);
  return block.forward(inputs[0], skip, fused);
}

// The decoder block on its inputs, checkpointed when lean (the skips concatenated inside).
Tensor runDecoderBlock(UnetDecoderBlockImpl& block, const std::vector<Tensor>& inputs, bool lean, bool fused) {
  if (!lean) return decoderBlock(block, inputs, fused);
  return checkpoint([&block](const std::vector<Tensor>& in) { return decoderBlock(block, in, false); }, inputs, block);
}

nn::Sequential headConv(int64_t classes) {
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(kDecoderChannels.back(), classes, 3).padding(1)));
}

}  // namespace

Tensor padToMultiple(const Tensor& images, int64_t multiple) {
  const int64_t height = images.size(2), width = images.size(3), m = multiple;
  const int64_t pad_h = (m - height % m) % m, pad_w = (m - width % m) % m;
  if (pad_h == 0 && pad_w == 0) return images;
  auto pad = torch::nn::functional::PadFuncOptions({0, pad_w, 0, pad_h});
  if (pad_h < height && pad_w < width)
    pad.mode(torch::kReflect);
  else
    pad.mode(torch::kReplicate);
  return torch::nn::functional::pad(images, pad);
}

std::vector<std::string> SegmentationModelImpl::loadPretrainedEncoder(const std::string&) {
  throw InputError("pretrained_encoder is for the models on a ResNet, Mix Transformer or DOFA encoder");
}

ResNetSegmenterImpl::ResNetSegmenterImpl(const ResNetModelOptions& opts, const std::string& encoder_name,
                                         int output_stride, int64_t pad_multiple)
    : options(opts), pad_multiple_(pad_multiple) {
  encoder = register_module(encoder_name, ResNetEncoder(options.in_channels(), options.depth(), output_stride));
  stem_ = std::make_shared<StemImpl>(encoder->conv1, encoder->bn1);
}

Tensor ResNetSegmenterImpl::forward(Tensor images) {
  const int64_t height = images.size(2), width = images.size(3);
  Tensor x = padToMultiple(images, pad_multiple_);
  const bool fused = !is_training() && unet_ops::fusedInference(x);
  const bool lean = options.checkpoint() && is_training() && torch::GradMode::is_enabled();
  if (fused) x = x.contiguous(torch::MemoryFormat::ChannelsLast);
  std::vector<Tensor> features;
  Tensor h = x;
  auto* enc = encoder.get();
  nn::Module* stage_modules[] = {stem_.get(), encoder->layer1.get(), encoder->layer2.get(), encoder->layer3.get(),
                                 encoder->layer4.get()};
  for (int s = 0; s < 5; ++s) {
    // Checkpointed, the stage runs again in backward: the function captures the encoder.
    h = lean ? checkpoint([enc, s](const std::vector<Tensor>& in) { return enc->stage(s, in[0]); }, {h},
                          *stage_modules[s])
             : encoder->stage(s, h, fused);
    features.push_back(readsFeature(s) || s == 4 ? h : Tensor());
  }
  h = Tensor();
  Tensor logits = decode(features, x.size(2), x.size(3), lean, fused);
  if (x.size(2) != height || x.size(3) != width) logits = logits.narrow(2, 0, height).narrow(3, 0, width);
  return logits.contiguous();
}

ResNetUNetImpl::ResNetUNetImpl(const ResNetModelOptions& opts) : ResNetDecoderHeadImpl(opts, 32, kMultiple) {
  registerDecoderHead(UnetDecoder(encoder->channels(), kDecoderChannels), headConv(options.classes()));
}

Tensor ResNetUNetImpl::decode(std::vector<Tensor>& features, int64_t, int64_t, bool lean, bool fused) {
  Tensor h = features[4];
  features[4] = Tensor();
  for (size_t i = 0; i < decoder->blocks->size(); ++i) {
    auto* block = decoder->blocks->ptr(i)->as<UnetDecoderBlockImpl>();
    std::vector<Tensor> inputs = {h};
    if (i < 4) inputs.push_back(features[3 - i]);
    h = Tensor();
    h = runDecoderBlock(*block, inputs, lean, fused);
    if (i < 4) features[3 - i] = Tensor();  // its decoder has read it
  }
  return segmentation_head->ptr(0)->as<nn::Conv2dImpl>()->forward(h);
}

ResNetUNetPlusPlusImpl::ResNetUNetPlusPlusImpl(const ResNetModelOptions& opts) : ResNetDecoderHeadImpl(opts, 32, kMultiple) {
  registerDecoderHead(UnetPlusPlusDecoder(encoder->channels(), kDecoderChannels), headConv(options.classes()));
}

Tensor ResNetUNetPlusPlusImpl::decode(std::vector<Tensor>& features, int64_t, int64_t, bool lean, bool fused) {
  // smp's order: f_0 = layer4 ... f_4 = the stem, kept as nodes (-1, k) next to x_d_l.
  using Key = std::pair<int, int>;
  std::map<Key, Tensor> values;
  for (int k = 0; k < 5; ++k) values[{-1, k}] = features[size_t(4 - k)];
  features.clear();
  // The nodes in smp's order, each with its inputs (x first, then the skips).
  const int depth = decoder->depth;
  std::vector<std::pair<Key, std::vector<Key>>> nodes;
  for (int l = 0; l < depth; ++l)
    for (int d = 0; d < depth - l; ++d) {
      const int n = d + l;
      std::vector<Key> inputs;
      if (l == 0) {
        inputs = {{-1, d}, {-1, d + 1}};
      } else {
        inputs.push_back({d, n - 1});
        for (int i = d + 1; i <= n; ++i) inputs.push_back({i, n});
        inputs.push_back({-1, n + 1});
      }
      nodes.push_back({{d, n}, inputs});
    }
  nodes.push_back({{0, depth}, {{0, depth - 1}}});
  // Each value is let go after its last reader.
  std::map<Key, int> readers;
  for (const auto& node : nodes)
    for (const auto& key : node.second) ++readers[key];
  for (const auto& [key, inputs] : nodes) {
    std::vector<Tensor> in;
    for (const auto& k : inputs) in.push_back(values.at(k));
    for (const auto& k : inputs)
      if (--readers[k] == 0) values.erase(k);
    values[key] = runDecoderBlock(decoder->block(key.first, key.second), in, lean, fused);
  }
  return segmentation_head->ptr(0)->as<nn::Conv2dImpl>()->forward(values.at({0, depth}));
}

std::vector<std::string> ResNetSegmenterImpl::loadPretrainedEncoder(const std::string& path) {
  // Names without their owner's prefix: a ResNet's own, DeepLabV3's backbone., smp's encoder.
  // (fc and the classifiers are not the encoder's: left out).
  EncoderWeights what;
  what.family = "resnet" + std::to_string(options.depth());
  what.expected = "it must hold torchvision's " + what.family + " weights (see README, \"Pretrained encoders\")";
  what.first_convolution = "conv1.weight";
  what.prefixes = {"module.", "backbone.", "encoder."};
  return loadEncoderWeights(*encoder, path, what);
}

}  // namespace geodl
