#include "core/resnet_unet.h"

#include <cstring>
#include <map>
#include <sstream>
#include <stdexcept>

#include "base/errors.h"

#include "core/checkpoint.h"
#include "core/unet_functions.h"

namespace geodl {

namespace nn = torch::nn;
using torch::Tensor;

namespace {

nn::Conv2d convNoBias(int64_t in, int64_t out, int64_t kernel, int64_t stride) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2).bias(false));
}

// bn(conv(x)); fused: one convolution with the BatchNorm folded in (inference), in the
// input's layout. Every convolution here pads by half its kernel.
Tensor convBn(const Tensor& x, nn::Conv2dImpl& conv, nn::BatchNorm2dImpl& bn, bool fused) {
  if (!fused) return bn.forward(conv.forward(x));
  auto [w, b] = foldBatchNorm(conv, bn);
  w = w.to(x.scalar_type());
  b = b.to(x.scalar_type());
  if (x.suggest_memory_format() == torch::MemoryFormat::ChannelsLast) w = w.contiguous(torch::MemoryFormat::ChannelsLast);
  const int64_t pad = conv.weight.size(2) / 2;
  return torch::conv2d(x, w, b, conv.options.stride(), {pad, pad});
}

// Conv2d, BatchNorm2d, ReLU: smp's Conv2dReLU with batch normalization.
nn::Sequential convBnRelu(int64_t in, int64_t out) {
  return nn::Sequential(convNoBias(in, out, 3, 1), nn::BatchNorm2d(out), nn::ReLU(nn::ReLUOptions(true)));
}

Tensor runConvBnRelu(const nn::Sequential& unit, const Tensor& x, bool fused) {
  return convBn(x, *unit->ptr(0)->as<nn::Conv2dImpl>(), *unit->ptr(1)->as<nn::BatchNorm2dImpl>(), fused).relu_();
}

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

constexpr int64_t kMultiple = 32;  // the encoder's output stride
const std::vector<int64_t> kDecoderChannels = {256, 128, 64, 32, 16};

}  // namespace

std::pair<Tensor, Tensor> foldBatchNorm(const nn::Conv2dImpl& conv, const nn::BatchNorm2dImpl& bn) {
  torch::NoGradGuard no_grad;
  const auto f = [](const Tensor& t) { return t.to(torch::kFloat); };
  const Tensor scale = f(bn.weight) / torch::sqrt(f(bn.running_var) + bn.options.eps());
  const Tensor weight = f(conv.weight) * scale.view({-1, 1, 1, 1});
  Tensor bias = f(bn.bias) - f(bn.running_mean) * scale;
  if (conv.bias.defined()) bias = bias + f(conv.bias) * scale;
  return {weight, bias};
}

ResNetBlockImpl::ResNetBlockImpl(int64_t in, int64_t planes, int64_t stride, bool is_bottleneck)
    : bottleneck(is_bottleneck) {
  const int64_t out = bottleneck ? planes * 4 : planes;
  conv1 = register_module("conv1", bottleneck ? convNoBias(in, planes, 1, 1) : convNoBias(in, planes, 3, stride));
  bn1 = register_module("bn1", nn::BatchNorm2d(planes));
  conv2 = register_module("conv2", convNoBias(planes, planes, 3, bottleneck ? stride : 1));
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

ResNetEncoderImpl::ResNetEncoderImpl(int64_t in_channels, int resnet_depth) : depth(resnet_depth) {
  const auto blocks = layerBlocks(depth);
  const bool bottleneck = depth == 50;
  conv1 = register_module("conv1", convNoBias(in_channels, 64, 7, 2));
  bn1 = register_module("bn1", nn::BatchNorm2d(64));
  int64_t in = 64;
  nn::Sequential* layers[] = {&layer1, &layer2, &layer3, &layer4};
  for (int i = 0; i < 4; ++i) {
    const int64_t planes = int64_t(64) << i;
    nn::Sequential layer;
    for (int b = 0; b < blocks[size_t(i)]; ++b) {
      layer->push_back(ResNetBlock(in, planes, b == 0 && i > 0 ? 2 : 1, bottleneck));
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
  conv1 = register_module("conv1", convBnRelu(in + skip, out));
  conv2 = register_module("conv2", convBnRelu(out, out));
}

Tensor UnetDecoderBlockImpl::forward(const Tensor& x, const Tensor& skip, bool fused) {
  Tensor h = torch::upsample_nearest2d(x, {2 * x.size(2), 2 * x.size(3)});
  if (skip.defined()) h = torch::cat({h, skip}, 1);
  return runConvBnRelu(conv2, runConvBnRelu(conv1, h, fused), fused);
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

namespace {

// The stem's parameters for its checkpoint, without renaming them (encoder.conv1, .bn1).
struct StemImpl : nn::Module {
  StemImpl(nn::Conv2d conv, nn::BatchNorm2d bn) {
    register_module("conv1", std::move(conv));
    register_module("bn1", std::move(bn));
  }
};

}  // namespace

ResNetUNetImpl::ResNetUNetImpl(const ResNetUNetOptions& opts) : options(opts) {
  encoder = register_module("encoder", ResNetEncoder(options.in_channels(), options.depth()));
  stem_ = std::make_shared<StemImpl>(encoder->conv1, encoder->bn1);
  decoder = register_module("decoder", UnetDecoder(encoder->channels(), kDecoderChannels));
  segmentation_head = register_module(
      "segmentation_head", nn::Sequential(nn::Conv2d(nn::Conv2dOptions(kDecoderChannels.back(), options.classes(), 3).padding(1))));
}

Tensor ResNetUNetImpl::run(const Tensor& x, bool lean, bool fused) {
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
    features.push_back(h);
  }
  for (size_t i = 0; i < decoder->blocks->size(); ++i) {
    auto* block = decoder->blocks->ptr(i)->as<UnetDecoderBlockImpl>();
    const Tensor skip = i < 4 ? features[3 - i] : Tensor();
    if (lean) {
      std::vector<Tensor> inputs = {h};
      if (skip.defined()) inputs.push_back(skip);
      h = checkpoint([block](const std::vector<Tensor>& in) {
            return block->forward(in[0], in.size() > 1 ? in[1] : Tensor());
          }, inputs, *block);
    } else {
      h = block->forward(h, skip, fused);
    }
    if (i < 4) features[3 - i] = Tensor();  // its decoder has read it
  }
  auto* head = segmentation_head->ptr(0)->as<nn::Conv2dImpl>();
  return head->forward(h);
}

Tensor ResNetUNetImpl::forward(Tensor images) {
  const int64_t height = images.size(2), width = images.size(3);
  const int64_t pad_h = (kMultiple - height % kMultiple) % kMultiple, pad_w = (kMultiple - width % kMultiple) % kMultiple;
  Tensor x = images;
  if (pad_h > 0 || pad_w > 0) {
    // Reflection where the image is large enough, else its edge repeated.
    const bool reflect = pad_h < height && pad_w < width;
    auto pad = torch::nn::functional::PadFuncOptions({0, pad_w, 0, pad_h});
    if (reflect)
      pad.mode(torch::kReflect);
    else
      pad.mode(torch::kReplicate);
    x = torch::nn::functional::pad(x, pad);
  }
  const bool fused = !is_training() && unet_ops::fusedInference(x);
  const bool lean = options.checkpoint() && is_training() && torch::GradMode::is_enabled();
  if (fused) x = x.contiguous(torch::MemoryFormat::ChannelsLast);
  Tensor logits = run(x, lean, fused);
  if (pad_h > 0 || pad_w > 0) logits = logits.narrow(2, 0, height).narrow(3, 0, width);
  return logits.contiguous();
}

Tensor adaptFirstConvolution(const Tensor& rgb, int64_t bands) {
  Tensor adapted = rgb.mean(1, true).expand({rgb.size(0), bands, rgb.size(2), rgb.size(3)}).clone();
  const int64_t n = std::min<int64_t>(3, bands);
  adapted.narrow(1, 0, n).copy_(rgb.narrow(1, 0, n));
  return adapted * (3.0 / double(bands));
}

std::vector<std::string> ResNetUNetImpl::loadPretrainedEncoder(const std::string& path) {
  const std::string resnet = "resnet" + std::to_string(options.depth());
  const std::string expected = "it must hold torchvision's " + resnet + " weights (see README, \"Pretrained encoders\")";
  const auto dict = readTorchSavedDict(path, "pretrained encoder file", "", expected);
  // Names without their owner's prefix: a ResNet's own, DeepLabV3's backbone., smp's encoder.
  std::map<std::string, Tensor> weights;
  for (const auto& entry : dict) {
    if (!entry.key().isString() || !entry.value().isTensor()) continue;
    std::string key = entry.key().toStringRef();
    for (const char* prefix : {"module.", "backbone.", "encoder."})
      if (key.rfind(prefix, 0) == 0) key = key.substr(std::strlen(prefix));
    weights[key] = entry.value().toTensor();
  }
  std::vector<std::string> log;
  torch::NoGradGuard no_grad;
  const auto load = [&](const std::string& name, Tensor& target) {
    auto it = weights.find(name);
    if (it == weights.end()) throw InputError("the pretrained encoder file '" + path + "' has no '" + name + "'; " + expected);
    Tensor source = it->second.to(target.scalar_type());
    if (name == "conv1.weight" && source.dim() == 4 && source.size(1) == 3 && target.size(1) != 3) {
      source = adaptFirstConvolution(source, target.size(1));
      log.push_back("the first convolution's RGB filters adapted to " + std::to_string(target.size(1)) +
                    " bands (extra bands: their mean; all scaled by 3/" + std::to_string(target.size(1)) + ")");
    }
    if (source.sizes() != target.sizes()) {
      std::ostringstream msg;
      msg << "the pretrained encoder file '" << path << "' gives '" << name << "' the shape " << source.sizes()
          << " but " << resnet << "'s needs " << target.sizes() << "; " << expected;
      throw InputError(msg.str());
    }
    target.copy_(source);
  };
  size_t loaded = 0;
  for (auto& p : encoder->named_parameters()) load(p.key(), p.value()), ++loaded;
  for (auto& b : encoder->named_buffers()) load(b.key(), b.value()), ++loaded;
  log.insert(log.begin(), std::to_string(loaded) + " " + resnet + " encoder tensors loaded from " + path);
  return log;
}

}  // namespace geodl
