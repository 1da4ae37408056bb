// What the transformer models (SegFormer, DOFA) share: LayerNorms under bf16 autocast,
// tokens and images, stochastic depth, multi-head self-attention on packed projections.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "core/torch_compat.h"

namespace geodl {

// A LayerNorm in its weights' type: under bf16 autocast (bfloat16 activations, float weights)
// in float, as CUDA's autocast runs layer_norm, where LibTorch 1.13's CPU kernel refuses the
// mix ("expected scalar type BFloat16 but found Float"). The next Linear casts back.
inline torch::Tensor normalized(torch::nn::LayerNorm& norm, const torch::Tensor& x) {
  const auto type = norm->weight.scalar_type();
  return norm->forward(x.scalar_type() == type ? x : x.to(type));
}

// (N, C, H, W) as tokens (N, H*W, C), and back.
inline torch::Tensor tokens(const torch::Tensor& x) { return x.flatten(2).transpose(1, 2); }
inline torch::Tensor image(const torch::Tensor& t, int64_t height, int64_t width) {
  return t.transpose(1, 2).reshape({t.size(0), t.size(2), height, width});
}

// Stochastic depth: the branch of each sample dropped with probability p (training only),
// the kept ones scaled by 1 / (1 - p), as timm's DropPath.
inline torch::Tensor dropPath(const torch::Tensor& x, double p, bool training) {
  if (!training || p <= 0) return x;
  const double keep = 1.0 - p;
  std::vector<int64_t> shape(size_t(x.dim()), 1);
  shape[0] = x.size(0);
  const torch::Tensor mask = torch::empty(shape, x.options()).bernoulli_(keep);
  return x * mask / keep;
}

// Self-attention of tokens (N, L, C) from one packed projection (3C rows: queries, keys,
// values, as timm's qkv and torch.nn.MultiheadAttention's in_proj), `heads` heads; the
// heads' outputs (N, L, C) before the output projection.
inline torch::Tensor packedSelfAttention(const torch::Tensor& x, const torch::Tensor& weight,
                                         const torch::Tensor& bias, int64_t heads) {
  const int64_t n = x.size(0), length = x.size(1), dim = x.size(2);
  const torch::Tensor qkv =
      torch::nn::functional::linear(x, weight, bias).reshape({n, length, 3, heads, dim / heads}).permute({2, 0, 3, 1, 4});
  return compat::attention(qkv[0], qkv[1], qkv[2]).transpose(1, 2).reshape({n, length, dim});
}

}  // namespace geodl
