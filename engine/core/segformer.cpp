#include "core/segformer.h"

#include <regex>

#include "base/errors.h"
#include "core/checkpoint.h"
#include "core/pretrained_encoder.h"
#include "core/torch_compat.h"
#include "core/transformer_ops.h"

namespace geodl {

namespace nn = torch::nn;
using torch::Tensor;

namespace {

nn::LayerNorm layerNorm(int64_t dim, double eps) { return nn::LayerNorm(nn::LayerNormOptions({dim}).eps(eps)); }

// Every pretrained Mix Transformer tensor is read under smp's names.
constexpr double kBlockEps = 1e-6, kEmbedEps = 1e-5;

}  // namespace

MixTransformerShape mixTransformerShape(int variant) {
  MixTransformerShape s;
  s.widths = variant == 0 ? std::vector<int64_t>{32, 64, 160, 256} : std::vector<int64_t>{64, 128, 320, 512};
  static const std::vector<int64_t> depths[] = {{2, 2, 2, 2}, {2, 2, 2, 2}, {3, 4, 6, 3},
                                                {3, 4, 18, 3}, {3, 8, 27, 3}, {3, 6, 40, 3}};
  if (variant < 0 || variant > 5) throw std::logic_error("no Mix Transformer B" + std::to_string(variant));
  s.depths = depths[variant];
  return s;
}

MixAttentionImpl::MixAttentionImpl(int64_t dim, int64_t heads_, int64_t sr_ratio_) : heads(heads_), sr_ratio(sr_ratio_) {
  q = register_module("q", nn::Linear(dim, dim));
  kv = register_module("kv", nn::Linear(dim, 2 * dim));
  proj = register_module("proj", nn::Linear(dim, dim));
  if (sr_ratio > 1) {
    sr = register_module("sr", nn::Conv2d(nn::Conv2dOptions(dim, dim, sr_ratio).stride(sr_ratio)));
    norm = register_module("norm", layerNorm(dim, kEmbedEps));
  }
}

Tensor MixAttentionImpl::forward(const Tensor& x, int64_t height, int64_t width) {
  const int64_t n = x.size(0), length = x.size(1), dim = x.size(2), head_dim = dim / heads;
  const Tensor query = q->forward(x).reshape({n, length, heads, head_dim}).permute({0, 2, 1, 3});
  Tensor reduced = x;
  if (sr_ratio > 1) reduced = normalized(norm, tokens(sr->forward(image(x, height, width))));
  const Tensor keys_values = kv->forward(reduced).reshape({n, -1, 2, heads, head_dim}).permute({2, 0, 3, 1, 4});
  const Tensor out = compat::attention(query, keys_values[0], keys_values[1]);
  return proj->forward(out.transpose(1, 2).reshape({n, length, dim}));
}

MixDepthwiseImpl::MixDepthwiseImpl(int64_t dim) {
  dwconv = register_module("dwconv", nn::Conv2d(nn::Conv2dOptions(dim, dim, 3).padding(1).groups(dim)));
}

MixFfnImpl::MixFfnImpl(int64_t dim, int64_t hidden) {
  fc1 = register_module("fc1", nn::Linear(dim, hidden));
  dwconv = register_module("dwconv", MixDepthwise(hidden));
  fc2 = register_module("fc2", nn::Linear(hidden, dim));
}

Tensor MixFfnImpl::forward(const Tensor& x, int64_t height, int64_t width) {
  Tensor h = fc1->forward(x);
  h = tokens(dwconv->dwconv->forward(image(h, height, width)));
  return fc2->forward(torch::gelu(h));
}

MixBlockImpl::MixBlockImpl(int64_t dim, int64_t heads, int64_t sr_ratio, double drop_path_) : drop_path(drop_path_) {
  norm1 = register_module("norm1", layerNorm(dim, kBlockEps));
  attn = register_module("attn", MixAttention(dim, heads, sr_ratio));
  norm2 = register_module("norm2", layerNorm(dim, kBlockEps));
  mlp = register_module("mlp", MixFfn(dim, 4 * dim));
}

Tensor MixBlockImpl::forward(const Tensor& x, int64_t height, int64_t width) {
  Tensor h = x + dropPath(attn->forward(normalized(norm1, x), height, width), drop_path, is_training());
  return h + dropPath(mlp->forward(normalized(norm2, h), height, width), drop_path, is_training());
}

OverlapPatchEmbedImpl::OverlapPatchEmbedImpl(int64_t in, int64_t out, int64_t kernel, int64_t stride) {
  proj = register_module("proj", nn::Conv2d(nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2)));
  norm = register_module("norm", layerNorm(out, kEmbedEps));
}

MixTransformerImpl::MixTransformerImpl(int64_t in_channels, const MixTransformerShape& shape_) : shape(shape_) {
  int64_t total = 0;
  for (auto d : shape.depths) total += d;
  int64_t index = 0;
  for (int s = 0; s < 4; ++s) {
    const std::string n = std::to_string(s + 1);
    patch_embed.push_back(register_module(
        "patch_embed" + n, OverlapPatchEmbed(s == 0 ? in_channels : shape.widths[size_t(s - 1)], shape.widths[size_t(s)],
                                             s == 0 ? 7 : 3, s == 0 ? 4 : 2)));
    nn::ModuleList list;
    for (int64_t i = 0; i < shape.depths[size_t(s)]; ++i, ++index) {
      // torch.linspace(0, drop_path_rate, total)[index]
      const double rate = total > 1 ? shape.drop_path * double(index) / double(total - 1) : 0.0;
      list->push_back(MixBlock(shape.widths[size_t(s)], shape.heads[size_t(s)], shape.sr_ratios[size_t(s)], rate));
    }
    blocks.push_back(register_module("block" + n, list));
    norms.push_back(register_module("norm" + n, layerNorm(shape.widths[size_t(s)], kBlockEps)));
  }
}

Tensor MixTransformerImpl::stage(int s, const Tensor& x, bool lean) {
  auto& embed = *patch_embed[size_t(s)];
  const Tensor projected = embed.proj->forward(x);
  const int64_t height = projected.size(2), width = projected.size(3);
  Tensor h = normalized(embed.norm, tokens(projected));
  for (size_t i = 0; i < blocks[size_t(s)]->size(); ++i) {
    auto* block = blocks[size_t(s)]->ptr(i)->as<MixBlockImpl>();
    h = checkpointedIf(
        lean, [block, height, width](const std::vector<Tensor>& in) { return block->forward(in[0], height, width); },
        {h}, *block);
  }
  return image(normalized(norms[size_t(s)], h), height, width).contiguous();
}

namespace {
// smp's MLP of the decoder: a Linear on each pixel, under the name "linear".
struct SegformerMlpImpl : nn::Module {
  SegformerMlpImpl(int64_t in, int64_t out) { linear = register_module("linear", nn::Linear(in, out)); }
  nn::Linear linear{nullptr};
};
TORCH_MODULE(SegformerMlp);
}  // namespace

SegformerDecoderImpl::SegformerDecoderImpl(const std::vector<int64_t>& widths, int64_t channels) {
  mlp_stage = register_module("mlp_stage", nn::ModuleList());
  for (auto it = widths.rbegin(); it != widths.rend(); ++it) mlp_stage->push_back(SegformerMlp(*it, channels));
  fuse_stage = register_module(
      "fuse_stage", nn::Sequential(nn::Conv2d(nn::Conv2dOptions(channels * int64_t(widths.size()), channels, 1).bias(false)),
                                   nn::BatchNorm2d(channels), nn::ReLU()));
}

Tensor SegformerDecoderImpl::forward(const std::vector<Tensor>& features, int64_t height, int64_t width) {
  std::vector<Tensor> resized;
  const size_t n = features.size();
  for (size_t i = 0; i < n; ++i) {
    const Tensor& f = features[n - 1 - i];  // the deepest first
    Tensor h = image(mlp_stage->ptr(i)->as<SegformerMlpImpl>()->linear->forward(tokens(f)), f.size(2), f.size(3));
    if (h.size(2) != height || h.size(3) != width)
      h = nn::functional::interpolate(
          h, nn::functional::InterpolateFuncOptions().size(std::vector<int64_t>{height, width}).mode(torch::kBilinear).align_corners(false));
    resized.push_back(h);
  }
  return fuse_stage->forward(torch::cat(resized, 1));
}

SegformerImpl::SegformerImpl(const SegformerOptions& opts) : options(opts) {
  const auto shape = mixTransformerShape(options.variant());
  encoder = register_module("encoder", MixTransformer(options.in_channels(), shape));
  decoder = register_module("decoder", SegformerDecoder(shape.widths));
  segmentation_head = register_module("segmentation_head", nn::Sequential(nn::Conv2d(nn::Conv2dOptions(256, options.classes(), 1))));
}

Tensor SegformerImpl::forward(Tensor images) {
  const int64_t height = images.size(2), width = images.size(3);
  const Tensor x = padToMultiple(images, 32);
  const bool lean = options.checkpoint() && is_training() && torch::GradMode::is_enabled();
  std::vector<Tensor> features;
  Tensor h = x;
  for (int s = 0; s < 4; ++s) features.push_back(h = encoder->stage(s, h, lean));
  h = Tensor();
  const int64_t out_h = x.size(2) / 4, out_w = x.size(3) / 4;
  auto* dec = decoder.get();
  Tensor fused = checkpointedIf(
      lean, [dec, out_h, out_w](const std::vector<Tensor>& in) { return dec->forward(in, out_h, out_w); }, features,
      *decoder);
  features.clear();
  Tensor logits = segmentation_head->ptr(0)->as<nn::Conv2dImpl>()->forward(fused);
  logits = nn::functional::interpolate(
      logits, nn::functional::InterpolateFuncOptions().size(std::vector<int64_t>{x.size(2), x.size(3)}).mode(torch::kBilinear).align_corners(true));
  if (x.size(2) != height || x.size(3) != width) logits = logits.narrow(2, 0, height).narrow(3, 0, width);
  return logits.contiguous();
}

std::map<std::string, Tensor> mixTransformerFromHuggingFace(const std::map<std::string, Tensor>& weights) {
  static const std::regex block(R"(^(?:segformer\.)?encoder\.block\.(\d+)\.(\d+)\.(.*)$)");
  static const std::regex embed(R"(^(?:segformer\.)?encoder\.patch_embeddings\.(\d+)\.(proj|layer_norm)\.(.*)$)");
  static const std::regex norm(R"(^(?:segformer\.)?encoder\.layer_norm\.(\d+)\.(.*)$)");
  static const std::vector<std::pair<std::string, std::string>> parts = {
      {"layer_norm_1.", "norm1."},          {"layer_norm_2.", "norm2."},
      {"attention.self.query.", "attn.q."}, {"attention.self.sr.", "attn.sr."},
      {"attention.self.layer_norm.", "attn.norm."}, {"attention.output.dense.", "attn.proj."},
      {"mlp.dense1.", "mlp.fc1."},          {"mlp.dense2.", "mlp.fc2."},
      {"mlp.dwconv.dwconv.", "mlp.dwconv.dwconv."}};
  const auto stage = [](const std::string& index) { return std::to_string(std::stoi(index) + 1); };
  std::map<std::string, Tensor> out, keys, values;
  for (const auto& [name, tensor] : weights) {
    std::smatch m;
    if (std::regex_match(name, m, block)) {
      const std::string prefix = "block" + stage(m[1]) + "." + m[2].str() + ".", rest = m[3];
      if (rest.rfind("attention.self.key.", 0) == 0) {
        keys[prefix + "attn.kv." + rest.substr(19)] = tensor;
        continue;
      }
      if (rest.rfind("attention.self.value.", 0) == 0) {
        values[prefix + "attn.kv." + rest.substr(21)] = tensor;
        continue;
      }
      std::string mapped = rest;
      for (const auto& [from, to] : parts)
        if (rest.rfind(from, 0) == 0) mapped = to + rest.substr(from.size());
      out[prefix + mapped] = tensor;
    } else if (std::regex_match(name, m, embed)) {
      out["patch_embed" + stage(m[1]) + "." + (m[2] == "proj" ? "proj." : "norm.") + m[3].str()] = tensor;
    } else if (std::regex_match(name, m, norm)) {
      out["norm" + stage(m[1]) + "." + m[2].str()] = tensor;
    } else {
      out[name] = tensor;
    }
  }
  // smp's kv: the keys' rows, then the values'.
  for (const auto& [name, key] : keys) {
    const auto v = values.find(name);
    if (v != values.end()) out[name] = torch::cat({key, v->second}, 0);
  }
  return out;
}

std::vector<std::string> SegformerImpl::loadPretrainedEncoder(const std::string& path) {
  const std::string family = "mit_b" + std::to_string(options.variant());
  EncoderWeights what;
  what.family = family;
  what.expected = "it must hold the " + family +
                  " Mix Transformer's weights: smp's encoder, NVIDIA's " + family +
                  ".pth or Hugging Face's Segformer (see README, \"Pretrained encoders\")";
  what.first_convolution = "patch_embed1.proj.weight";
  what.prefixes = {"module.", "encoder.", "backbone."};
  what.rename = mixTransformerFromHuggingFace;
  return loadEncoderWeights(*encoder, path, what);
}

}  // namespace geodl
