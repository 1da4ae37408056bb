#include "core/unet.h"

#include "core/unet_functions.h"

namespace geodl {

namespace nn = torch::nn;

std::vector<int64_t> unetWidths() { return {64, 128, 256, 512, 1024}; }
std::vector<int64_t> unetSmallWidths() { return {32, 64, 128, 256}; }

EncodingBlockImpl::EncodingBlockImpl(int64_t in, int64_t out, bool batch_norm, double dropout) {
  // Same layer order, hence the same state-dict keys, as geo-deep-learning's EncodingBlock.
  block = nn::Sequential();
  for (int u = 0; u < 2; ++u) {
    block->push_back(nn::ReflectionPad2d(nn::ReflectionPad2dOptions(1)));
    block->push_back(nn::Conv2d(nn::Conv2dOptions(u == 0 ? in : out, out, 3)));
    block->push_back(nn::PReLU());
    if (batch_norm) block->push_back(nn::BatchNorm2d(out));
    if (dropout > 0.0) block->push_back(nn::Dropout(dropout));
  }
  register_module("EncodingBlock", block);
  ConvUnit unit;
  for (size_t i = 0; i < block->size(); ++i) {
    auto m = block->ptr(i);
    if (auto* conv = m->as<nn::Conv2dImpl>()) {
      unit = ConvUnit{};
      unit.conv = conv;
      unit.dropout = dropout;
    } else if (auto* prelu = m->as<nn::PReLUImpl>()) {
      unit.prelu = prelu;
      if (!batch_norm) units.push_back(unit);
    } else if (auto* bn = m->as<nn::BatchNorm2dImpl>()) {
      unit.bn = bn;
      units.push_back(unit);
    }
  }
}

torch::Tensor EncodingBlockImpl::forward(const torch::Tensor& x, bool pool) {
  torch::Tensor h = pool ? unet_ops::maxPool(x) : x;
  for (const auto& unit : units) h = unet_ops::unitForward(unit, h);
  return h;
}

DecodingBlockImpl::DecodingBlockImpl(int64_t in, int64_t out) {
  up = nn::Sequential(
      nn::Upsample(nn::UpsampleOptions().scale_factor(std::vector<double>{2.0, 2.0})
                       .mode(torch::kBilinear).align_corners(false)),
      nn::Conv2d(nn::Conv2dOptions(in, out, 1)));
  register_module("up", up);
  up_conv = up->ptr(1)->as<nn::Conv2dImpl>();
  conv = register_module("conv", EncodingBlock(in, out, /*batch_norm=*/false, /*dropout=*/0.0));
}

torch::Tensor DecodingBlockImpl::unitsInput(const torch::Tensor& skip, const torch::Tensor& x) {
  // The 1x1 conv commutes with bilinear upsampling (both linear, interpolation weights
  // summing to one), so it runs at the lower resolution: 4x fewer operations and no
  // upsampled copy of the wide input.
  auto a = unet_ops::upsample2x(unet_ops::conv(x, *up_conv));
  return torch::cat({unet_ops::resizeTo(skip, a), a}, 1);
}

torch::Tensor DecodingBlockImpl::forward(const torch::Tensor& skip, const torch::Tensor& x) {
  auto h = unitsInput(skip, x);
  for (const auto& unit : conv->units) h = unet_ops::unitForward(unit, h);
  return h;
}

UNetImpl::UNetImpl(const UNetOptions& opts) : options(opts) {
  const auto& widths = options.widths();
  TORCH_CHECK(widths.size() >= 2, "a UNet needs at least one encoder level and a centre");
  const double dropout = options.dropout() ? options.probability() : 0.0;
  int64_t in = options.in_channels();
  for (size_t i = 0; i + 1 < widths.size(); ++i) {
    encoders.push_back(register_module("conv" + std::to_string(i + 1),
                                       EncodingBlock(in, widths[i], true, dropout)));
    in = widths[i];
  }
  center = register_module("center", EncodingBlock(in, widths.back(), true, dropout));
  decoders.resize(encoders.size(), nullptr);
  for (size_t i = encoders.size(); i-- > 0;) {
    decoders[i] = register_module("decode" + std::to_string(i + 1),
                                  DecodingBlock(widths[i + 1], widths[i]));
  }
  final = register_module("final", nn::Conv2d(nn::Conv2dOptions(widths[0], options.classes(), 1)));
}

namespace {

// Inference (CPU, no autograd): the same layers, channels last (oneDNN's fastest layout
// for convolutions and pooling), with fewer passes over memory. Each unit's PReLU and
// BatchNorm run in one pass that also writes the next convolution's padded input, and
// the decoder concatenates straight into its padded input.
torch::Tensor runUnits(const std::vector<ConvUnit>& units, torch::Tensor padded) {
  torch::Tensor h;
  for (size_t u = 0; u < units.size(); ++u) {
    const bool last = u + 1 == units.size();
    h = unet_ops::activate(units[u], unet_ops::conv(padded, *units[u].conv), !last);
    if (!last) padded = h;
  }
  return h;
}

torch::Tensor inferenceEncoder(const torch::Tensor& x, const EncodingBlockImpl& block, bool pool) {
  return runUnits(block.units, unet_ops::padChannelsLast(pool ? unet_ops::maxPool(x) : x));
}

torch::Tensor inferenceDecoder(const torch::Tensor& skip, const torch::Tensor& x,
                               const DecodingBlockImpl& block) {
  auto a = unet_ops::upsample2x(unet_ops::conv(x, *block.up_conv));
  auto s = unet_ops::resizeTo(skip, a);
  const int64_t cs = s.size(1), ca = a.size(1), h = a.size(2), w = a.size(3);
  auto padded = torch::empty({a.size(0), cs + ca, h + 2, w + 2},
                             a.options().memory_format(torch::MemoryFormat::ChannelsLast));
  auto inside = padded.narrow(2, 1, h).narrow(3, 1, w);
  inside.narrow(1, 0, cs).copy_(s);
  inside.narrow(1, cs, ca).copy_(a);
  unet_ops::reflectBorder(padded);
  return runUnits(block.conv->units, padded);
}

}  // namespace

torch::Tensor UNetImpl::forward(torch::Tensor images) {
  if (!is_training() && unet_ops::fusedInference(images) && images.size(2) >= 2 &&
      images.size(3) >= 2) {
    std::vector<torch::Tensor> skips;
    torch::Tensor h = images;
    for (size_t i = 0; i < encoders.size(); ++i) {
      h = inferenceEncoder(h, *encoders[i], i > 0);
      skips.push_back(h);
    }
    h = inferenceEncoder(h, *center, true);
    for (size_t i = encoders.size(); i-- > 0;) {
      h = inferenceDecoder(skips[i], h, *decoders[i]);
      skips[i] = torch::Tensor();
    }
    return unet_ops::resizeTo(final->forward(h), images).contiguous();
  }
  // Checkpointing (or keeping only the conv outputs) pays only when a backward pass follows.
  const bool step = is_training() && torch::GradMode::is_enabled();
  const bool keep_convs = step && !options.checkpoint();
  const bool lean = step && (options.checkpoint() || options.recompute_activations());
  std::vector<torch::Tensor> skips;
  torch::Tensor h = images;
  for (size_t i = 0; i < encoders.size(); ++i) {
    h = lean ? checkpointedEncoder(h, *encoders[i], i > 0, keep_convs) : encoders[i]->forward(h, i > 0);
    skips.push_back(h);
  }
  h = lean ? checkpointedEncoder(h, *center, true, keep_convs) : center->forward(h, true);
  for (size_t i = encoders.size(); i-- > 0;) {
    h = lean ? checkpointedDecoder(skips[i], h, *decoders[i], keep_convs) : decoders[i]->forward(skips[i], h);
    skips[i] = torch::Tensor();  // lets the skip go once its decoder has it
  }
  auto logits = final->forward(h);
  return unet_ops::resizeTo(logits, images);
}

}  // namespace geodl
