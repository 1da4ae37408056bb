#include "core/unet_functions.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>

#include "core/checkpoint.h"
#include "core/torch_compat.h"
#include "core/sync_batch_norm.h"

namespace geodl {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

namespace {

// Reflection padding of bfloat16 activations (training under autocast), which LibTorch's CPU
// kernels do not pad (autocast would pad in float: a conversion each way at every unit).
// Padded in bfloat16 and in channels-last layout, where oneDNN's bfloat16 convolutions are
// fastest.
struct Bf16PadFunction : torch::autograd::Function<Bf16PadFunction> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x) {
    ctx->saved_data["sizes"] = x.sizes();
    return unet_ops::padChannelsLast(x);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto sizes = ctx->saved_data["sizes"].toIntVector();
    return {unet_ops::padBackward(grads[0], sizes, at::kBFloat16)};
  }
};

}  // namespace

namespace unet_ops {

Tensor pad(const Tensor& x) {
  if (x.scalar_type() != at::kBFloat16 || !x.device().is_cpu()) return at::reflection_pad2d(x, {1, 1, 1, 1});
  if (at::GradMode::is_enabled() && x.requires_grad()) return Bf16PadFunction::apply(x);
  return padChannelsLast(x);
}

Tensor padBackward(const Tensor& grad, at::IntArrayRef input_sizes, at::ScalarType input_type) {
  if (grad.scalar_type() != at::kBFloat16) {
    const Tensor shape = at::empty({1, 1, 1, 1}, grad.options()).expand(input_sizes);  // sizes only
    Tensor out = at::reflection_pad2d_backward(grad, shape, {1, 1, 1, 1});
    return out.scalar_type() == input_type ? out : out.to(input_type);
  }
  // bfloat16 (no LibTorch kernel): the interior, plus the reflected border rows, then columns,
  // channels last as the padded tensor is, so the ops before it keep their fast paths.
  const int64_t h = input_sizes[2], w = input_sizes[3];
  Tensor rows = grad.narrow(2, 1, h).contiguous(at::MemoryFormat::ChannelsLast);
  rows.narrow(2, 1, 1).add_(grad.narrow(2, 0, 1));
  rows.narrow(2, h - 2, 1).add_(grad.narrow(2, h + 1, 1));
  Tensor out = rows.narrow(3, 1, w).contiguous(at::MemoryFormat::ChannelsLast);
  out.narrow(3, 1, 1).add_(rows.narrow(3, 0, 1));
  out.narrow(3, w - 2, 1).add_(rows.narrow(3, w + 1, 1));
  return out.scalar_type() == input_type ? out : out.to(input_type);
}

Tensor conv(const Tensor& x, const torch::nn::Conv2dImpl& c) {
  return at::conv2d(x, c.weight, c.bias);
}

Tensor maxPool(const Tensor& x) {
  return std::get<0>(at::max_pool2d_with_indices(x, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false));
}

// bfloat16 is interpolated in float, where LibTorch's CPU kernels (forward and above all
// backward) are several times faster, and rounded once.
Tensor upsample2x(const Tensor& x) {
  if (x.scalar_type() == at::kBFloat16 && x.device().is_cpu())
    return at::upsample_bilinear2d(x.to(at::kFloat), {x.size(2) * 2, x.size(3) * 2}, false, 2.0, 2.0)
        .to(at::kBFloat16);
  return at::upsample_bilinear2d(x, {x.size(2) * 2, x.size(3) * 2}, false, 2.0, 2.0);
}

Tensor upsample2xBackward(const Tensor& grad, at::IntArrayRef input_sizes) {
  const bool bf16 = grad.scalar_type() == at::kBFloat16 && grad.device().is_cpu();
  Tensor g = at::upsample_bilinear2d_backward(bf16 ? grad.to(at::kFloat) : grad, {grad.size(2), grad.size(3)},
                                              input_sizes, false, 2.0, 2.0);
  return bf16 ? g.to(at::kBFloat16) : g;
}

Tensor resizeTo(const Tensor& x, const Tensor& like) {
  if (x.size(2) == like.size(2) && x.size(3) == like.size(3)) return x;
  return at::upsample_bilinear2d(x, {like.size(2), like.size(3)}, false, c10::nullopt,
                                 c10::nullopt);
}

Tensor dropoutNoise(const Tensor& like, double p) {
  return at::empty_like(like, at::MemoryFormat::Contiguous).bernoulli_(1.0 - p).div_(1.0 - p);
}

Tensor unitForward(const ConvUnit& unit, const Tensor& x) { return unitActivation(unit, conv(pad(x), *unit.conv)); }

Tensor unitActivation(const ConvUnit& unit, const Tensor& y) {
  Tensor h = at::prelu(y, unit.prelu->weight);
  if (unit.bn) h = batchNormSync() && unit.bn->is_training() ? syncBatchNorm(h, *unit.bn) : unit.bn->forward(h);
  if (unit.dropout > 0.0 && unit.conv->is_training()) h = h * dropoutNoise(h, unit.dropout);
  return h;
}

bool fusedInference(const Tensor& x) {
  return x.device().is_cpu() && (x.scalar_type() == at::kFloat || x.scalar_type() == at::kBFloat16) &&
         !at::GradMode::is_enabled();
}

namespace {

// Values as float and back: plain for float; for bfloat16, the bits shifted, rounding to
// nearest even (activations are finite), in a form the compiler vectorizes (c10::BFloat16's
// own conversions, which check for NaN, do not: they made activate() a fifth of bf16's time).
inline float toFloat(float v) { return v; }
inline float fromFloat(float v, float) { return v; }
inline float toFloat(uint16_t v) {
  const uint32_t bits = uint32_t(v) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
inline uint16_t fromFloat(float f, uint16_t) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return uint16_t((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

// One row of w pixels: PReLU then BatchNorm, channel by channel, branch-free so that it
// vectorizes. Compiled for AVX-512 and AVX2 too (the build's baseline is SSE2), the
// processor's best chosen when the program starts.
template <class T>
inline void pixelsKernel(const T* __restrict__ in, T* __restrict__ o, int64_t w, int64_t channels,
                         const float* __restrict__ sl, const float* __restrict__ sc, const float* __restrict__ sh) {
  for (int64_t x = 0; x < w; ++x, in += channels, o += channels)
    for (int64_t c = 0; c < channels; ++c) {
      const float v = toFloat(in[c]);
      o[c] = fromFloat((std::max(v, 0.0f) + sl[c] * std::min(v, 0.0f)) * sc[c] + sh[c], T());
    }
}
__attribute__((target_clones("avx512f", "avx2", "default"), optimize("fp-contract=off"))) void activatePixels(
    const float* in, float* o, int64_t w, int64_t channels, const float* sl, const float* sc, const float* sh) {
  pixelsKernel(in, o, w, channels, sl, sc, sh);
}
__attribute__((target_clones("avx512f", "avx2", "default"), optimize("fp-contract=off"))) void activatePixels(
    const uint16_t* in, uint16_t* o, int64_t w, int64_t channels, const float* sl, const float* sc, const float* sh) {
  pixelsKernel(in, o, w, channels, sl, sc, sh);
}

// PReLU then BatchNorm, channel by channel, computed in float whatever T holds (float, or
// bfloat16's bits); the output one pixel larger on every side (mirrored) when padded.
template <class T>
void activateRows(const T* src, T* dst, int64_t n, int64_t h, int64_t w, int64_t channels, bool padded,
                  const float* __restrict__ sl, const float* __restrict__ sc, const float* __restrict__ sh) {
  const int64_t pad = padded ? 1 : 0, oh = h + 2 * pad, ow = w + 2 * pad;
  // Channels last: the channel varies fastest, so the per-channel terms are plain arrays.
  at::parallel_for(0, n * h, 1, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t image = row / h, r = row % h;
      const T* __restrict__ in = src + row * w * channels;
      T* __restrict__ o = dst + ((image * oh + r + pad) * ow + pad) * channels;
      activatePixels(in, o, w, channels, sl, sc, sh);
      in += w * channels;
      o += w * channels;
      if (padded) {  // o is one pixel past the row's last
        T* first = o - w * channels;
        std::copy(first + channels, first + 2 * channels, first - channels);
        std::copy(o - 2 * channels, o - channels, o);
      }
    }
  });
  if (padded) {
    const int64_t row = ow * channels;
    for (int64_t image = 0; image < n; ++image) {
      T* p = dst + image * oh * row;
      std::copy(p + 2 * row, p + 3 * row, p);
      std::copy(p + (h - 1) * row, p + h * row, p + (h + 1) * row);
    }
  }
}

}  // namespace

Tensor activate(const ConvUnit& unit, Tensor y, bool padded) {
  y = y.contiguous(at::MemoryFormat::ChannelsLast);
  const int64_t n = y.size(0), channels = y.size(1), h = y.size(2), w = y.size(3);
  TORCH_CHECK(!padded || (h >= 2 && w >= 2), "reflection padding needs at least 2 x 2 pixels");
  // Per channel: the PReLU slope, and BatchNorm as a scale and a shift.
  std::vector<float> slope(static_cast<size_t>(channels)), scale(static_cast<size_t>(channels), 1.0f),
      shift(static_cast<size_t>(channels), 0.0f);
  const Tensor slopes = unit.prelu->weight.to(at::kFloat).contiguous();
  for (int64_t c = 0; c < channels; ++c)
    slope[size_t(c)] = slopes.data_ptr<float>()[slopes.numel() == 1 ? 0 : c];
  if (unit.bn) {
    const auto& bn = *unit.bn;
    Tensor a = at::rsqrt(bn.running_var.to(at::kFloat) + bn.options.eps());
    if (bn.options.affine()) a = a * bn.weight.to(at::kFloat);
    Tensor b = -bn.running_mean.to(at::kFloat) * a;
    if (bn.options.affine()) b = b + bn.bias.to(at::kFloat);
    a = a.contiguous();
    b = b.contiguous();
    std::copy(a.data_ptr<float>(), a.data_ptr<float>() + channels, scale.begin());
    std::copy(b.data_ptr<float>(), b.data_ptr<float>() + channels, shift.begin());
  }
  const int64_t pad = padded ? 1 : 0, oh = h + 2 * pad, ow = w + 2 * pad;
  Tensor out = padded ? at::empty({n, channels, oh, ow}, y.options().memory_format(at::MemoryFormat::ChannelsLast)) : y;
  if (y.scalar_type() == at::kBFloat16)
    activateRows(reinterpret_cast<const uint16_t*>(y.data_ptr<at::BFloat16>()),
                 reinterpret_cast<uint16_t*>(out.data_ptr<at::BFloat16>()), n, h, w, channels, padded, slope.data(),
                 scale.data(), shift.data());
  else
    activateRows(y.data_ptr<float>(), out.data_ptr<float>(), n, h, w, channels, padded, slope.data(), scale.data(),
                 shift.data());
  return out;
}

Tensor padChannelsLast(const Tensor& x) {
  const int64_t h = x.size(2), w = x.size(3);
  TORCH_CHECK(h >= 2 && w >= 2, "reflection padding needs at least 2 x 2 pixels");
  Tensor p = at::empty({x.size(0), x.size(1), h + 2, w + 2}, x.options().memory_format(at::MemoryFormat::ChannelsLast));
  p.narrow(2, 1, h).narrow(3, 1, w).copy_(x);
  reflectBorder(p);
  return p;
}

void reflectBorder(Tensor& p) {
  const int64_t h = p.size(2) - 2, w = p.size(3) - 2;
  p.narrow(2, 0, 1).narrow(3, 1, w).copy_(p.narrow(2, 2, 1).narrow(3, 1, w));
  p.narrow(2, h + 1, 1).narrow(3, 1, w).copy_(p.narrow(2, h - 1, 1).narrow(3, 1, w));
  p.narrow(3, 0, 1).copy_(p.narrow(3, 2, 1));
  p.narrow(3, w + 1, 1).copy_(p.narrow(3, w - 1, 1));
}

}  // namespace unet_ops

namespace {

std::vector<Tensor> unitParameters(const ConvUnit& unit) {
  std::vector<Tensor> params = {unit.conv->weight, unit.conv->bias, unit.prelu->weight};
  if (unit.bn) {
    params.push_back(unit.bn->weight);
    params.push_back(unit.bn->bias);
  }
  return params;
}


struct ConvGrads {
  Tensor input, weight, bias;
};

// Weight and bias gradients first, then the input gradient: oneDNN's reordered copies of
// the input and of the input gradient are then never alive at the same time.
// Under autocast the convolution ran in the gradient's type (bfloat16) on its input and
// weight cast to it, as autocast casts them; the parameter gradients are the parameters' type.
ConvGrads convBackward(const Tensor& grad, const Tensor& input, const torch::nn::Conv2dImpl& conv,
                       bool input_grad) {
  const std::vector<int64_t> bias_sizes = {conv.weight.size(0)};
  const auto type = grad.scalar_type();
  const Tensor in = input.scalar_type() == type ? input : input.to(type);
  const Tensor weight = conv.weight.scalar_type() == type ? conv.weight : conv.weight.to(type);
  ConvGrads grads;
  if (type == at::kBFloat16) {  // one call, as autograd's: channels last needs no reordered copies
    auto all = at::convolution_backward(grad, in, weight, bias_sizes, {1, 1}, {0, 0}, {1, 1}, false, {0, 0}, 1,
                                        {input_grad, true, true});
    return {std::get<0>(all), std::get<1>(all).to(conv.weight.scalar_type()),
            std::get<2>(all).to(conv.bias.scalar_type())};
  }
  auto weight_grads =
      at::convolution_backward(grad, in, weight, bias_sizes, {1, 1}, {0, 0}, {1, 1},
                               false, {0, 0}, 1, {false, true, true});
  grads.weight = std::get<1>(weight_grads).to(conv.weight.scalar_type());
  grads.bias = std::get<2>(weight_grads).to(conv.bias.scalar_type());
  if (input_grad) {
    grads.input = std::get<0>(at::convolution_backward(grad, in, weight, bias_sizes,
                                                       {1, 1}, {0, 0}, {1, 1}, false, {0, 0}, 1,
                                                       {true, false, false}));
  }
  return grads;
}

// A gradient in its input's type (bfloat16 activations give bfloat16 gradients).
Tensor like(Tensor grad, const Tensor& input) {
  return grad.defined() && grad.scalar_type() != input.scalar_type() ? grad.to(input.scalar_type()) : grad;
}

// Backward of one conv unit from the gradient of its output, given what the recompute kept:
// the conv output `y`, the BatchNorm input `z` (recomputed from y when undefined), the
// padded conv input `xp`, the dropout noise and BatchNorm statistics. Appends the unit's
// parameter gradients to `param_grads` and returns the gradient of the unpadded input
// (undefined when !input_grad). Every tensor is released as soon as it has served.
struct UnitRecompute {
  Tensor y, z, xp, noise, mean, invstd;
  double count = 0;  // the pixels of the (all ranks') batch, for sync_batchnorm
};

// `input`: the unit's input's sizes and type, which the gradient of its padding returns in
// (float input is padded in float, bfloat16 in bfloat16: see unet_ops::pad).
struct InputShape {
  std::vector<int64_t> sizes;
  at::ScalarType type = at::kFloat;
  explicit InputShape(const Tensor& x = Tensor()) {
    if (x.defined()) sizes = x.sizes().vec(), type = x.scalar_type();
  }
  InputShape(std::vector<int64_t> s, at::ScalarType t) : sizes(std::move(s)), type(t) {}
};

Tensor unitBackward(const ConvUnit& unit, UnitRecompute& r, Tensor g, bool input_grad,
                    const InputShape& input, std::vector<Tensor>& param_grads) {
  if (r.noise.defined()) {
    g = g * r.noise;
    r.noise.reset();
  }
  Tensor g_gamma, g_beta;
  if (unit.bn) {
    if (!r.z.defined()) r.z = at::prelu(r.y, unit.prelu->weight);
    auto [gz, gg, gb] = batchNormSync()
                            ? syncBatchNormBackward(g, r.z, unit.bn->weight, r.mean, r.invstd, r.count)
                            : at::native_batch_norm_backward(g, r.z, unit.bn->weight, {}, {}, r.mean, r.invstd,
                                                             true, unit.bn->options.eps(), {true, true, true});
    r.z.reset();
    g = std::move(gz);
    g_gamma = std::move(gg);
    g_beta = std::move(gb);
  }
  auto [gy, g_prelu] = compat::preluBackward(g, r.y, unit.prelu->weight);
  r.y.reset();
  g.reset();
  auto grads = convBackward(gy, r.xp, *unit.conv, input_grad);
  const auto padded_type = r.xp.scalar_type();  // float where autocast padded in float
  r.xp.reset();
  gy.reset();
  param_grads.insert(param_grads.end(), {grads.weight, grads.bias, g_prelu});
  if (unit.bn) param_grads.insert(param_grads.end(), {g_gamma, g_beta});
  if (!input_grad) return Tensor();
  return unet_ops::padBackward(grads.input.to(padded_type), input.sizes, input.type);
}

// Recomputes a unit from its input and keeps what its backward needs; returns its output.
// With `y` defined (the conv output kept by forward), the convolution is not run again.
Tensor unitRecompute(const ConvUnit& unit, const Tensor& xp, UnitRecompute& r, bool keep_xp,
                     bool keep_z, const Tensor& y = Tensor()) {
  r.y = y.defined() ? y : unet_ops::conv(xp, *unit.conv);
  if (keep_xp) r.xp = xp;
  Tensor h = at::prelu(r.y, unit.prelu->weight);
  if (unit.bn) {
    // No running statistics: the forward pass already updated them, once.
    if (batchNormSync()) {
      std::tie(r.mean, r.invstd, r.count) = syncBatchStatistics(h, unit.bn->options.eps());
      const Tensor out = (h - r.mean.view({1, -1, 1, 1})) * (r.invstd * unit.bn->weight).view({1, -1, 1, 1}) +
                         unit.bn->bias.view({1, -1, 1, 1});
      if (keep_z) r.z = h;
      h = out;
    } else {
      auto [out, mean, invstd] = at::native_batch_norm(h, unit.bn->weight, unit.bn->bias, {}, {},
                                                       true, 0.0, unit.bn->options.eps());
      r.mean = mean;
      r.invstd = invstd;
      if (keep_z) r.z = h;
      h = out;
    }
  }
  if (unit.dropout > 0.0) {
    r.noise = unet_ops::dropoutNoise(h, unit.dropout);
    h = h * r.noise;
  }
  return h;
}

// The shapes of a block input pooled 2x2 (or not), and of the concatenation of a decoder's
// skip and upsampled maps, without computing either.
InputShape pooledShape(const Tensor& x, bool pool) {
  if (!pool) return InputShape(x.sizes().vec(), x.scalar_type());
  return InputShape({x.size(0), x.size(1), x.size(2) / 2, x.size(3) / 2}, x.scalar_type());
}
InputShape concatShape(const Tensor& s, const Tensor& a) {
  return InputShape({a.size(0), s.size(1) + a.size(1), a.size(2), a.size(3)}, a.scalar_type());
}

bool hasDropout(const EncodingBlockImpl& block) {
  for (const auto& u : block.units)
    if (u.dropout > 0.0) return true;
  return false;
}

// The units of a block on h, run without autograd; with `ys`, each unit's conv output is
// appended to it (what the convolutions-kept mode saves for backward).
Tensor runUnitsKeeping(const std::vector<ConvUnit>& units, Tensor h, std::vector<Tensor>* ys) {
  for (const auto& unit : units) {
    Tensor y = unet_ops::conv(unet_ops::pad(h), *unit.conv);
    h = Tensor();
    if (ys) ys->push_back(y);
    h = unet_ops::unitActivation(unit, y);
  }
  return h;
}

// The conv outputs a forward kept (saved after the function's inputs), or none.
std::vector<Tensor> keptConvOutputs(const variable_list& saved, size_t inputs) {
  return std::vector<Tensor>(saved.begin() + long(inputs), saved.end());
}

struct EncoderFunction : torch::autograd::Function<EncoderFunction> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x, at::TensorList params,
                        EncodingBlockImpl* block, bool pool, bool keep_convs) {
    if (hasDropout(*block)) ctx->saved_data["rng"] = rngState(x.device());
    ctx->saved_data["block"] = reinterpret_cast<int64_t>(block);
    ctx->saved_data["pool"] = pool;
    AutocastState::current().save(ctx);
    // Grad mode is off here: nothing is kept but what is saved.
    std::vector<Tensor> saved = {x};
    const Tensor out = runUnitsKeeping(block->units, pool ? unet_ops::maxPool(x) : x, keep_convs ? &saved : nullptr);
    ctx->save_for_backward(saved);
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto* block = reinterpret_cast<EncodingBlockImpl*>(ctx->saved_data["block"].toInt());
    const bool pool = ctx->saved_data["pool"].toBool();
    AutocastReplay autocast(AutocastState::saved(ctx));  // the recompute casts as forward did
    const bool input_grad = ctx->needs_input_grad(0);
    const auto saved = ctx->get_saved_variables();
    Tensor x = saved[0];
    std::vector<Tensor> ys = keptConvOutputs(saved, 1);
    Tensor g = std::move(grads[0]);
    grads.clear();
    const auto& units = block->units;
    const size_t n = units.size();
    std::vector<UnitRecompute> kept(n);
    std::vector<InputShape> inputs(n);
    {
      RngReplay replay(ctx->saved_data.count("rng") ? ctx->saved_data["rng"].toTensor() : Tensor(),
                       x.device());
      // With the first unit's conv output kept, the (pooled) block input is not needed
      // until the first unit's backward: only its shape is.
      Tensor h = ys.empty() ? (pool ? unet_ops::maxPool(x) : x) : Tensor();
      for (size_t u = 0; u < n; ++u) {
        inputs[u] = h.defined() ? InputShape(h) : pooledShape(x, pool);
        const Tensor y = u < ys.size() ? ys[u] : Tensor();
        // The first unit's padded input is recomputed at the end (it may be pooled), and
        // not at all here when its conv output was kept; the last unit's BatchNorm input
        // is needed first, so it is kept.
        Tensor xp = u == 0 && y.defined() ? Tensor() : unet_ops::pad(h);
        h.reset();
        h = unitRecompute(units[u], xp, kept[u], /*keep_xp=*/u > 0, /*keep_z=*/u + 1 == n, y);
      }
    }
    ys.clear();
    std::vector<std::vector<Tensor>> unit_grads(n);
    Tensor indices;  // of the pooling, computed with the first unit's input
    for (size_t u = n; u-- > 0;) {
      const bool need_input = u > 0 || input_grad;
      if (u == 0) {
        Tensor in0 = x;
        if (pool) {
          std::tie(in0, indices) = at::max_pool2d_with_indices(x, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false);
          if (!input_grad) indices.reset();
        }
        kept[0].xp = unet_ops::pad(in0);
      }
      g = unitBackward(units[u], kept[u], std::move(g), need_input, inputs[u], unit_grads[u]);
    }
    Tensor gx;
    if (input_grad) {
      gx = pool ? at::max_pool2d_with_indices_backward(g, x, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false, indices)
                : std::move(g);
    }
    variable_list out = {like(gx, x)};
    for (auto& ug : unit_grads) out.insert(out.end(), ug.begin(), ug.end());
    out.emplace_back();  // block
    out.emplace_back();  // pool
    out.emplace_back();  // keep_convs
    return out;
  }
};

struct DecoderFunction : torch::autograd::Function<DecoderFunction> {
  static Tensor forward(AutogradContext* ctx, const Tensor& skip, const Tensor& x,
                        at::TensorList params, DecodingBlockImpl* block, bool keep_convs) {
    ctx->saved_data["block"] = reinterpret_cast<int64_t>(block);
    AutocastState::current().save(ctx);
    std::vector<Tensor> saved = {skip, x};
    const Tensor out = runUnitsKeeping(block->conv->units, block->unitsInput(skip, x), keep_convs ? &saved : nullptr);
    ctx->save_for_backward(saved);
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto* block = reinterpret_cast<DecodingBlockImpl*>(ctx->saved_data["block"].toInt());
    AutocastReplay autocast(AutocastState::saved(ctx));  // the recompute casts as forward did
    const bool skip_grad = ctx->needs_input_grad(0);
    const bool x_grad = ctx->needs_input_grad(1);
    auto saved = ctx->get_saved_variables();
    const Tensor& skip = saved[0];
    const Tensor& x = saved[1];
    std::vector<Tensor> ys = keptConvOutputs(saved, 2);
    Tensor g = std::move(grads[0]);
    grads.clear();
    const auto& units = block->conv->units;
    const size_t n = units.size();

    // Recompute: the upsampled map is dropped at once (cheap to redo); the concatenation
    // is rebuilt from the skip and `a` when the first unit's backward needs it.
    Tensor a = unet_ops::upsample2x(unet_ops::conv(x, *block->up_conv));
    Tensor s = unet_ops::resizeTo(skip, a);
    const std::vector<int64_t> a_sizes = a.sizes().vec();
    const int64_t skip_channels = s.size(1);
    std::vector<UnitRecompute> kept(n);
    std::vector<InputShape> inputs(n);
    {
      // With the first unit's conv output kept, the concatenation is built once, for the
      // first unit's backward; here only its shape is needed.
      Tensor h = ys.empty() ? torch::cat({s, a}, 1) : Tensor();
      for (size_t u = 0; u < n; ++u) {
        inputs[u] = h.defined() ? InputShape(h) : concatShape(s, a);
        const Tensor y = u < ys.size() ? ys[u] : Tensor();
        Tensor xp = u == 0 && y.defined() ? Tensor() : unet_ops::pad(h);
        h.reset();
        h = unitRecompute(units[u], xp, kept[u], /*keep_xp=*/u > 0, /*keep_z=*/false, y);
      }
    }
    ys.clear();
    std::vector<std::vector<Tensor>> unit_grads(n);
    for (size_t u = n; u-- > 0;) {
      if (u == 0) {
        kept[0].xp = unet_ops::pad(torch::cat({s, a}, 1));
        a.reset();
        s.reset();
      }
      g = unitBackward(units[u], kept[u], std::move(g), true, inputs[u], unit_grads[u]);
    }
    Tensor g_skip;
    if (skip_grad) {
      Tensor gs = g.narrow(1, 0, skip_channels);
      if (gs.size(2) == skip.size(2) && gs.size(3) == skip.size(3)) {
        g_skip = gs.contiguous(gs.suggest_memory_format());  // a copy, so the concatenated gradient can go
      } else {
        g_skip = at::upsample_bilinear2d_backward(gs, {gs.size(2), gs.size(3)}, skip.sizes(),
                                                  false, c10::nullopt, c10::nullopt);
      }
    }
    Tensor ga = g.narrow(1, skip_channels, g.size(1) - skip_channels);
    g.reset();
    Tensor ga_low = unet_ops::upsample2xBackward(ga, {a_sizes[0], a_sizes[1], x.size(2), x.size(3)});
    ga.reset();
    auto up_grads = convBackward(ga_low, x, *block->up_conv, x_grad);
    Tensor g_x = up_grads.input;
    variable_list out = {like(g_skip, skip), like(g_x, x), up_grads.weight, up_grads.bias};
    for (auto& ug : unit_grads) out.insert(out.end(), ug.begin(), ug.end());
    out.emplace_back();  // block
    out.emplace_back();  // keep_convs
    return out;
  }
};

}  // namespace

Tensor checkpointedEncoder(const Tensor& x, EncodingBlockImpl& block, bool pool, bool keep_convs) {
  std::vector<Tensor> params;
  for (const auto& unit : block.units) {
    auto p = unitParameters(unit);
    params.insert(params.end(), p.begin(), p.end());
  }
  return EncoderFunction::apply(x, at::TensorList(params), &block, pool, keep_convs);
}

Tensor checkpointedDecoder(const Tensor& skip, const Tensor& x, DecodingBlockImpl& block, bool keep_convs) {
  std::vector<Tensor> params = {block.up_conv->weight, block.up_conv->bias};
  for (const auto& unit : block.conv->units) {
    auto p = unitParameters(unit);
    params.insert(params.end(), p.begin(), p.end());
  }
  return DecoderFunction::apply(skip, x, at::TensorList(params), &block, keep_convs);
}

}  // namespace geodl
