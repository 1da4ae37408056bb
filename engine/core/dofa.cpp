#include "core/dofa.h"

#include <cmath>

#include "base/errors.h"
#include "core/checkpoint.h"
#include "core/pretrained_encoder.h"
#include "core/transformer_ops.h"

namespace geodl {

namespace nn = torch::nn;
namespace F = torch::nn::functional;
using torch::Tensor;

namespace {

constexpr int64_t kPatch = 16, kCode = 128, kWeightTokens = 128, kPretrainingGrid = 14;

nn::LayerNorm layerNorm(int64_t dim, double eps) { return nn::LayerNorm(nn::LayerNormOptions({dim}).eps(eps)); }

// smp's Conv2dReLU with BatchNorm: conv (no bias), BatchNorm, ReLU, as "0", "1", "2".
nn::Sequential convNormRelu(int64_t in, int64_t out, int64_t kernel) {
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(in, out, kernel).padding(kernel / 2).bias(false)),
                        nn::BatchNorm2d(out), nn::ReLU());
}

// geo-deep-learning's ConvModule: conv (with bias) and norm; the ReLU is applied by the caller.
struct ConvNormImpl : nn::Module {
  ConvNormImpl(int64_t in, int64_t out, int64_t kernel) {
    conv = register_module("conv", nn::Conv2d(nn::Conv2dOptions(in, out, kernel).padding(kernel / 2)));
    norm = register_module("norm", nn::BatchNorm2d(out));
  }
  Tensor forward(const Tensor& x) { return torch::relu(norm->forward(conv->forward(x))); }
  nn::Conv2d conv{nullptr};
  nn::BatchNorm2d norm{nullptr};
};
TORCH_MODULE(ConvNorm);

// smp's FPNLateralBlock: its conv under "conv_norm_relu".
struct LateralBlockImpl : nn::Module {
  LateralBlockImpl(int64_t in, int64_t out) { conv_norm_relu = register_module("conv_norm_relu", convNormRelu(in, out, 1)); }
  nn::Sequential conv_norm_relu{nullptr};
};
TORCH_MODULE(LateralBlock);

// smp's pyramid pooling block: Sequential(AdaptiveAvgPool2d, Conv2dReLU), as "0" and "1".
struct PoolBlockImpl : nn::Module {
  PoolBlockImpl(int64_t size, int64_t in, int64_t out) {
    pool = register_module("0", nn::AdaptiveAvgPool2d(size));
    conv = register_module("1", convNormRelu(in, out, 1));
  }
  Tensor forward(const Tensor& x) { return conv->forward(pool->forward(x)); }
  nn::AdaptiveAvgPool2d pool{nullptr};
  nn::Sequential conv{nullptr};
};
TORCH_MODULE(PoolBlock);

Tensor resized(const Tensor& x, int64_t height, int64_t width) {
  if (x.size(2) == height && x.size(3) == width) return x;
  return F::interpolate(x, F::InterpolateFuncOptions()
                               .size(std::vector<int64_t>{height, width})
                               .mode(torch::kBilinear)
                               .align_corners(false));
}

// smp's LayerNorm2d: a LayerNorm over the channels of (N, C, H, W), in the weights' type.
Tensor channelNorm(nn::LayerNormImpl& norm, const Tensor& x) {
  const auto type = norm.weight.scalar_type();
  const Tensor last = x.permute({0, 2, 3, 1});
  return norm.forward(last.scalar_type() == type ? last : last.to(type)).permute({0, 3, 1, 2});
}

}  // namespace

DofaShape dofaShape(bool large) {
  if (large) return {1024, 24, 16, {7, 11, 15, 23}};
  return {768, 12, 12, {3, 5, 7, 11}};
}

Tensor resamplePositionEmbedding(const Tensor& embedding, int64_t from_h, int64_t from_w, int64_t to_h, int64_t to_w) {
  if (from_h == to_h && from_w == to_w) return embedding;
  const int64_t dim = embedding.size(2);
  const Tensor prefix = embedding.narrow(1, 0, 1);
  Tensor grid = embedding.narrow(1, 1, from_h * from_w).to(torch::kFloat).reshape({1, from_h, from_w, dim}).permute({0, 3, 1, 2});
  grid = F::interpolate(grid, F::InterpolateFuncOptions()
                                  .size(std::vector<int64_t>{to_h, to_w})
                                  .mode(torch::kBicubic)
                                  .align_corners(false)
                                  .antialias(true));
  grid = grid.permute({0, 2, 3, 1}).reshape({1, to_h * to_w, dim}).to(embedding.scalar_type());
  return torch::cat({prefix, grid}, 1);
}

Tensor sineCosineCode(int64_t dim, const Tensor& positions) {
  Tensor omega = torch::arange(dim / 2, positions.options().dtype(torch::kFloat)) / (double(dim) / 2.0);
  omega = 1.0 / torch::pow(10000.0, omega);
  const Tensor angles = positions.reshape({-1, 1}).to(torch::kFloat) * omega.reshape({1, -1});
  return torch::cat({torch::sin(angles), torch::cos(angles)}, 1);
}

PackedAttentionImpl::PackedAttentionImpl(int64_t dim, int64_t heads_) : heads(heads_) {
  in_proj_weight = register_parameter("in_proj_weight", torch::empty({3 * dim, dim}));
  in_proj_bias = register_parameter("in_proj_bias", torch::zeros({3 * dim}));
  out_proj = register_module("out_proj", nn::Linear(dim, dim));
  nn::init::xavier_uniform_(in_proj_weight);  // torch.nn.MultiheadAttention's
}

Tensor PackedAttentionImpl::forward(const Tensor& x) {
  return out_proj->forward(packedSelfAttention(x, in_proj_weight, in_proj_bias, heads));
}

PostNormEncoderLayerImpl::PostNormEncoderLayerImpl(int64_t dim, int64_t heads, int64_t feedforward) {
  self_attn = register_module("self_attn", PackedAttention(dim, heads));
  linear1 = register_module("linear1", nn::Linear(dim, feedforward));
  linear2 = register_module("linear2", nn::Linear(feedforward, dim));
  norm1 = register_module("norm1", layerNorm(dim, 1e-5));
  norm2 = register_module("norm2", layerNorm(dim, 1e-5));
}

Tensor PostNormEncoderLayerImpl::forward(const Tensor& x) {
  const Tensor h = normalized(norm1, x + self_attn->forward(x));
  return normalized(norm2, h + linear2->forward(torch::gelu(linear1->forward(h))));
}

WeightGeneratorImpl::WeightGeneratorImpl(int64_t code, int64_t weights, int64_t width) {
  weight_tokens = register_parameter("weight_tokens", torch::randn({kWeightTokens, code}) * 0.02);
  bias_token = register_parameter("bias_token", torch::randn({1, code}) * 0.02);
  auto encoder = std::make_shared<nn::Module>();
  layers = encoder->register_module("layers", nn::ModuleList(PostNormEncoderLayer(code, 4, 2048)));
  register_module("transformer_encoder", encoder);
  fc_weight = register_module("fc_weight", nn::Linear(code, weights));
  fc_bias = register_module("fc_bias", nn::Linear(code, width));
  // TorchGeo's: xavier-uniform Linears with biases of 0.01, in the generator and fclayer.
  torch::NoGradGuard no_grad;
  for (auto& m : modules(false))
    if (auto* linear = m->as<nn::LinearImpl>()) {
      nn::init::xavier_uniform_(linear->weight);
      linear->bias.fill_(0.01);
    }
}

std::pair<Tensor, Tensor> WeightGeneratorImpl::forward(const Tensor& codes) {
  const int64_t bands = codes.size(0);
  const Tensor sequence = torch::cat({weight_tokens, codes.to(weight_tokens.scalar_type()), bias_token}, 0).unsqueeze(0);
  const Tensor out = layers->ptr(0)->as<PostNormEncoderLayerImpl>()->forward(sequence).squeeze(0);
  const Tensor weights = fc_weight->forward(out.narrow(0, kWeightTokens, bands) + codes);
  const Tensor bias = fc_bias->forward(out.narrow(0, kWeightTokens + bands, 1)).reshape({-1});
  return {weights, bias};
}

ResidualMlpImpl::ResidualMlpImpl(int64_t dim) {
  w1 = register_module("w1", nn::Linear(dim, dim));
  w2 = register_module("w2", nn::Linear(dim, dim));
  torch::NoGradGuard no_grad;
  for (auto* linear : {w1.get(), w2.get()}) {
    nn::init::xavier_uniform_(linear->weight);
    linear->bias.fill_(0.01);
  }
}

Tensor ResidualMlpImpl::forward(const Tensor& x) {
  return x + torch::relu(w2->forward(torch::relu(w1->forward(x))));
}

DofaEmbeddingImpl::DofaEmbeddingImpl(int64_t width_, int64_t patch_) : width(width_), patch(patch_) {
  weight_generator = register_module("weight_generator", WeightGenerator(kCode, patch * patch * width, width));
  fclayer = register_module("fclayer", ResidualMlp(kCode));
}

Tensor DofaEmbeddingImpl::forward(const Tensor& images, const Tensor& wavelengths) {
  const int64_t bands = wavelengths.size(0);
  const Tensor codes = fclayer->forward(sineCosineCode(kCode, wavelengths * 1000.0));
  auto [weights, bias] = weight_generator->forward(codes);
  // (bands, patch, patch, width) as a convolution's (width, bands, patch, patch), scaled.
  const Tensor filters = weights.reshape({bands, patch, patch, width}).permute({3, 0, 1, 2}) * 0.01;
  const Tensor out = F::conv2d(images, filters, F::Conv2dFuncOptions().bias(bias * 0.01).stride(patch).padding(1));
  return tokens(out);
}

VitBlockImpl::VitBlockImpl(int64_t dim, int64_t heads_) : heads(heads_) {
  norm1 = register_module("norm1", layerNorm(dim, 1e-6));
  auto attn = std::make_shared<nn::Module>();
  qkv = attn->register_module("qkv", nn::Linear(dim, 3 * dim));
  proj = attn->register_module("proj", nn::Linear(dim, dim));
  register_module("attn", attn);
  norm2 = register_module("norm2", layerNorm(dim, 1e-6));
  auto mlp = std::make_shared<nn::Module>();
  fc1 = mlp->register_module("fc1", nn::Linear(dim, 4 * dim));
  fc2 = mlp->register_module("fc2", nn::Linear(4 * dim, dim));
  register_module("mlp", mlp);
}

Tensor VitBlockImpl::forward(const Tensor& x) {
  const Tensor h = x + proj->forward(packedSelfAttention(normalized(norm1, x), qkv->weight, qkv->bias, heads));
  return h + fc2->forward(torch::gelu(fc1->forward(normalized(norm2, h))));
}

DofaEncoderImpl::DofaEncoderImpl(const DofaShape& shape_) : shape(shape_) {
  patch_embed = register_module("patch_embed", DofaEmbedding(shape.width, kPatch));
  cls_token = register_parameter("cls_token", torch::zeros({1, 1, shape.width}));
  // MAE's fixed 2-D sine-cosine embedding (TorchGeo's starts at zeros, for its weights files
  // to fill): half the channels code the row, half the column; the class token's is zero.
  const int64_t n = kPretrainingGrid, half = shape.width / 2;
  const Tensor positions = torch::arange(n, torch::kFloat);
  const Tensor rows = sineCosineCode(half, positions.repeat_interleave(n)), columns = sineCosineCode(half, positions.repeat({n}));
  const Tensor grid = torch::cat({columns, rows}, 1);
  pos_embed = register_buffer("pos_embed", torch::cat({torch::zeros({1, shape.width}), grid}, 0).unsqueeze(0));
  blocks = register_module("blocks", nn::ModuleList());
  for (int64_t i = 0; i < shape.depth; ++i) blocks->push_back(VitBlock(shape.width, shape.heads));
  torch::NoGradGuard no_grad;
  nn::init::normal_(cls_token, 0.0, 0.02);
  for (auto& m : blocks->modules(false))  // timm's ViT: normal (std 0.02), zero biases
    if (auto* linear = m->as<nn::LinearImpl>()) {
      nn::init::normal_(linear->weight, 0.0, 0.02);  // timm's cutoff (2) is 100 std away
      linear->bias.zero_();
    }
}

std::vector<Tensor> DofaEncoderImpl::forward(const Tensor& images, const Tensor& wavelengths, bool lean) {
  const int64_t n = images.size(0);
  // The convolution of stride 16 with padding 1: floor((side + 2 - 16) / 16) + 1 patches.
  const int64_t h = (images.size(2) + 2 - kPatch) / kPatch + 1, w = (images.size(3) + 2 - kPatch) / kPatch + 1;
  Tensor x = patch_embed->forward(images, wavelengths);
  const Tensor pos = resamplePositionEmbedding(pos_embed, kPretrainingGrid, kPretrainingGrid, h, w);
  x = x + pos.narrow(1, 1, h * w);
  const Tensor cls = (cls_token + pos.narrow(1, 0, 1)).expand({n, -1, -1});
  x = torch::cat({cls.to(x.scalar_type()), x}, 1);
  std::vector<Tensor> features;
  size_t next = 0;
  for (size_t i = 0; i < blocks->size(); ++i) {
    auto* block = blocks->ptr(i)->as<VitBlockImpl>();
    x = checkpointedIf(lean, [block](const std::vector<Tensor>& in) { return block->forward(in[0]); }, {x}, *block);
    if (next < shape.feature_blocks.size() && int64_t(i) == shape.feature_blocks[next]) {
      features.push_back(image(x.narrow(1, 1, h * w), h, w).contiguous());
      ++next;
    }
  }
  return features;
}

MultiLevelNeckImpl::MultiLevelNeckImpl(int64_t width, std::vector<double> scales_) : scales(std::move(scales_)) {
  lateral_convs = register_module("lateral_convs", nn::ModuleList());
  convs = register_module("convs", nn::ModuleList());
  for (size_t i = 0; i < scales.size(); ++i) {
    lateral_convs->push_back(ConvNorm(width, width, 1));
    convs->push_back(ConvNorm(width, width, 3));
  }
}

std::vector<Tensor> MultiLevelNeckImpl::forward(const std::vector<Tensor>& levels) {
  std::vector<Tensor> out;
  for (size_t i = 0; i < scales.size(); ++i) {
    Tensor x = lateral_convs->ptr(i)->as<ConvNormImpl>()->forward(levels[i]);
    // By the factor, as torch.nn.functional.interpolate(scale_factor=...) resizes: the
    // output's side floor(side * factor), sampled at the factor (not at the sides' ratio).
    if (scales[i] != 1.0)
      x = F::interpolate(x, F::InterpolateFuncOptions()
                                .scale_factor(std::vector<double>{scales[i], scales[i]})
                                .mode(torch::kBilinear)
                                .align_corners(false)
                                .recompute_scale_factor(false));
    out.push_back(convs->ptr(i)->as<ConvNormImpl>()->forward(x));
  }
  return out;
}

UperNetDecoderImpl::UperNetDecoderImpl(const std::vector<int64_t>& widths, int64_t channels) {
  feature_norms = register_module("feature_norms", nn::ModuleList());
  for (auto w : widths) feature_norms->push_back(layerNorm(w, 1e-6));
  auto psp = std::make_shared<nn::Module>();
  psp_blocks = psp->register_module("blocks", nn::ModuleList());
  for (int64_t size : {1, 2, 3, 6})
    psp_blocks->push_back(PoolBlock(size, widths.back(), channels));
  psp_out_conv = psp->register_module("out_conv", convNormRelu(widths.back() + 4 * channels, channels, 3));
  register_module("psp", psp);
  fpn_lateral_blocks = register_module("fpn_lateral_blocks", nn::ModuleList());
  fpn_conv_blocks = register_module("fpn_conv_blocks", nn::ModuleList());
  for (size_t i = widths.size() - 1; i-- > 0;) {  // the finer levels, the coarsest of them first
    fpn_lateral_blocks->push_back(LateralBlock(widths[i], channels));
    fpn_conv_blocks->push_back(convNormRelu(channels, channels, 3));
  }
  fusion_block = register_module("fusion_block", convNormRelu(int64_t(widths.size()) * channels, channels, 3));
}

Tensor UperNetDecoderImpl::forward(std::vector<Tensor> levels) {
  for (size_t i = 0; i < levels.size(); ++i)
    levels[i] = channelNorm(*feature_norms->ptr(i)->as<nn::LayerNormImpl>(), levels[i]);
  // The pyramid pooling module on the coarsest level.
  const Tensor& coarsest = levels.back();
  std::vector<Tensor> pyramid = {coarsest};
  for (size_t i = 0; i < psp_blocks->size(); ++i)
    pyramid.push_back(resized(psp_blocks->ptr(i)->as<PoolBlockImpl>()->forward(coarsest), coarsest.size(2), coarsest.size(3)));
  std::vector<Tensor> fpn = {psp_out_conv->forward(torch::cat(pyramid, 1))};
  pyramid.clear();
  // Top-down: each finer level's lateral conv plus the coarser state, resized to it.
  for (size_t i = 0; i + 1 < levels.size(); ++i) {
    const Tensor lateral =
        fpn_lateral_blocks->ptr(i)->as<LateralBlockImpl>()->conv_norm_relu->forward(levels[levels.size() - 2 - i]);
    fpn.push_back(resized(fpn.back(), lateral.size(2), lateral.size(3)) + lateral);
  }
  for (size_t i = 1; i < fpn.size(); ++i) fpn[i] = fpn_conv_blocks->ptr(i - 1)->as<nn::SequentialImpl>()->forward(fpn[i]);
  const int64_t height = fpn.back().size(2), width = fpn.back().size(3);
  std::vector<Tensor> stacked;
  for (auto it = fpn.rbegin(); it != fpn.rend(); ++it) stacked.push_back(resized(*it, height, width));
  return fusion_block->forward(torch::cat(stacked, 1));
}

DofaImpl::DofaImpl(const DofaOptions& opts) : options(opts) {
  if (int64_t(options.wavelengths().size()) != options.in_channels())
    throw InputError("DOFA needs the wavelength of each band: " + std::to_string(options.in_channels()) +
                     " bands but " + std::to_string(options.wavelengths().size()) + " wavelengths");
  const auto shape = dofaShape(options.large());
  encoder = register_module("encoder", DofaEncoder(shape));
  neck = register_module("neck", MultiLevelNeck(shape.width));
  decoder = register_module("decoder", UperNetDecoder(std::vector<int64_t>(4, shape.width)));
  segmentation_head = register_module("segmentation_head", nn::Sequential(nn::Conv2d(nn::Conv2dOptions(256, options.classes(), 1))));
  neck_and_decoder = std::make_shared<nn::Module>();
  neck_and_decoder->register_module("neck", neck);
  neck_and_decoder->register_module("decoder", decoder);
  wavelengths = torch::tensor(options.wavelengths(), torch::kDouble).to(torch::kFloat);
}

Tensor DofaImpl::forward(Tensor images) {
  const int64_t height = images.size(2), width = images.size(3);
  const Tensor x = padToMultiple(images, kPatch);
  const bool lean = options.checkpoint() && is_training() && torch::GradMode::is_enabled();
  if (wavelengths.device() != x.device()) wavelengths = wavelengths.to(x.device());
  std::vector<Tensor> features = encoder->forward(x, wavelengths, lean);
  auto* neck_ = neck.get();
  auto* decoder_ = decoder.get();
  Tensor fused = checkpointedIf(
      lean, [neck_, decoder_](const std::vector<Tensor>& in) { return decoder_->forward(neck_->forward(in)); },
      features, *neck_and_decoder);
  features.clear();
  Tensor logits = segmentation_head->ptr(0)->as<nn::Conv2dImpl>()->forward(fused);
  logits = resized(logits, x.size(2), x.size(3));
  if (x.size(2) != height || x.size(3) != width) logits = logits.narrow(2, 0, height).narrow(3, 0, width);
  return logits.contiguous();
}

std::vector<std::string> DofaImpl::loadPretrainedEncoder(const std::string& path) {
  const std::string family = options.large() ? "dofa_large" : "dofa_base";
  EncoderWeights what;
  what.family = family;
  what.expected = "it must hold TorchGeo's " + family + " weights (DOFA" + (options.large() ? "Large" : "Base") +
                  "16_Weights) or the DOFA authors' DOFA_ViT_" + (options.large() ? "large" : "base") +
                  "_e100.pth (see README, \"Pretrained encoders\")";
  what.prefixes = {"module.", "encoder.", "backbone.", "model."};
  const int64_t width = dofaShape(options.large()).width;
  what.rename = [width](const std::map<std::string, Tensor>& weights) {
    std::map<std::string, Tensor> out = weights;
    for (auto& [name, tensor] : out) {
      const bool pos = name == "pos_embed" || (name.size() > 10 && name.compare(name.size() - 10, 10, ".pos_embed") == 0);
      if (!pos || tensor.dim() != 3 || tensor.size(2) != width) continue;
      const auto grid = int64_t(std::lround(std::sqrt(double(tensor.size(1) - 1))));
      if (grid * grid + 1 == tensor.size(1) && grid != kPretrainingGrid)
        tensor = resamplePositionEmbedding(tensor, grid, grid, kPretrainingGrid, kPretrainingGrid);
    }
    return out;
  };
  return loadEncoderWeights(*encoder, path, what);
}

}  // namespace geodl
