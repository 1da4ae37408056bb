// SegFormer B0-B5 (segformer_b0 ... segformer_b5): segmentation-models-pytorch 0.6's
// Segformer on its Mix Transformer encoders mit_b0 ... mit_b5, with smp's names and
// parameter counts.
//
// Encoder (NVIDIA's MixVisionTransformer, smp's copy of it; names encoder.*): four stages,
// each an overlapping patch embedding (patch_embedN: conv 7x7 stride 4 then 3x3 stride 2,
// padding half the kernel, and a LayerNorm over the channels), transformer blocks (blockN.i)
// and a LayerNorm (normN; eps 1e-6 like the blocks' norm1 and norm2; the patch embeddings'
// and the attentions' norms keep 1e-5). A block: x + attn(norm1(x)), then x + mlp(norm2(x)),
// each branch through stochastic depth in training (drop rates rising linearly from 0 to 0.1
// over all blocks, as smp sets them). attn: efficient self-attention, q from the tokens and
// kv (one Linear, keys then values) from the tokens reduced by a conv of kernel and stride
// sr_ratio (8, 4, 2, 1 by stage) and a LayerNorm; heads 1, 2, 5, 8; scaled dot-product
// attention (LibTorch's fused kernel where it has one, compat::attention), then proj. mlp:
// Mix-FFN: fc1 (4x wider), a depthwise conv 3x3 on the tokens as an image (dwconv.dwconv),
// GELU, fc2. Widths 32-64-160-256 for B0, 64-128-320-512 for the others; depths 2-2-2-2
// (B0, B1), 3-4-6-3, 3-4-18-3, 3-8-27-3, 3-6-40-3 (B2-B5).
//
// Decoder (smp's SegformerDecoder, 256 channels): each stage's features through a Linear to
// 256 (decoder.mlp_stage.0 for the deepest ... 3 for the first), resized bilinearly
// (align_corners false) to a quarter of the input, concatenated deepest first, then
// fuse_stage = conv 1x1 (no bias), BatchNorm, ReLU. The head (segmentation_head.0) is a conv
// 1x1 to the classes, upsampled x4 (bilinear, align_corners true) as smp's head does.
//
// Inputs whose sides are not multiples of 32 are padded by reflection (smp refuses them) and
// the logits cropped back. Checkpointing recomputes each transformer block, and the
// decoder, in backward. With other than 3 bands the first patch embedding takes them all
// (smp's in_channels).
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

#include "core/models.h"

namespace geodl {

// The shape of a Mix Transformer: mit_b0 ... mit_b5.
struct MixTransformerShape {
  std::vector<int64_t> widths, depths;
  std::vector<int64_t> heads = {1, 2, 5, 8}, sr_ratios = {8, 4, 2, 1};
  double drop_path = 0.1;
};
MixTransformerShape mixTransformerShape(int variant);  // 0 ... 5

// Efficient self-attention on tokens (N, L, C) of an image height x width.
struct MixAttentionImpl : torch::nn::Module {
  MixAttentionImpl(int64_t dim, int64_t heads, int64_t sr_ratio);
  torch::Tensor forward(const torch::Tensor& x, int64_t height, int64_t width);
  int64_t heads, sr_ratio;
  torch::nn::Linear q{nullptr}, kv{nullptr}, proj{nullptr};
  torch::nn::Conv2d sr{nullptr};     // sr_ratio > 1 only
  torch::nn::LayerNorm norm{nullptr};  // likewise
};
TORCH_MODULE(MixAttention);

// The depthwise conv 3x3 of Mix-FFN, under smp's name (mlp.dwconv.dwconv).
struct MixDepthwiseImpl : torch::nn::Module {
  explicit MixDepthwiseImpl(int64_t dim);
  torch::nn::Conv2d dwconv{nullptr};
};
TORCH_MODULE(MixDepthwise);

struct MixFfnImpl : torch::nn::Module {
  MixFfnImpl(int64_t dim, int64_t hidden);
  torch::Tensor forward(const torch::Tensor& x, int64_t height, int64_t width);
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
  MixDepthwise dwconv{nullptr};
};
TORCH_MODULE(MixFfn);

struct MixBlockImpl : torch::nn::Module {
  MixBlockImpl(int64_t dim, int64_t heads, int64_t sr_ratio, double drop_path);
  // Tokens (N, L, C) of an image height x width.
  torch::Tensor forward(const torch::Tensor& x, int64_t height, int64_t width);
  double drop_path;
  torch::nn::LayerNorm norm1{nullptr}, norm2{nullptr};
  MixAttention attn{nullptr};
  MixFfn mlp{nullptr};
};
TORCH_MODULE(MixBlock);

struct OverlapPatchEmbedImpl : torch::nn::Module {
  OverlapPatchEmbedImpl(int64_t in, int64_t out, int64_t kernel, int64_t stride);
  torch::nn::Conv2d proj{nullptr};
  torch::nn::LayerNorm norm{nullptr};
};
TORCH_MODULE(OverlapPatchEmbed);

// smp's MixVisionTransformerEncoder: patch_embed1-4, block1-4, norm1-4.
struct MixTransformerImpl : torch::nn::Module {
  MixTransformerImpl(int64_t in_channels, const MixTransformerShape& shape);
  // Stage s (0-3) on the previous stage's features (N, C, H, W); lean: each block
  // checkpointed.
  torch::Tensor stage(int s, const torch::Tensor& x, bool lean);
  MixTransformerShape shape;
  std::vector<OverlapPatchEmbed> patch_embed;
  std::vector<torch::nn::ModuleList> blocks;
  std::vector<torch::nn::LayerNorm> norms;
};
TORCH_MODULE(MixTransformer);

struct SegformerDecoderImpl : torch::nn::Module {
  SegformerDecoderImpl(const std::vector<int64_t>& encoder_widths, int64_t channels = 256);
  // The four stages' features, the first stage's first; height x width: the logits' size / 4.
  torch::Tensor forward(const std::vector<torch::Tensor>& features, int64_t height, int64_t width);
  torch::nn::ModuleList mlp_stage{nullptr};  // each a module holding "linear"
  torch::nn::Sequential fuse_stage{nullptr};
};
TORCH_MODULE(SegformerDecoder);

struct SegformerOptions {
  SegformerOptions(int64_t in_channels, int64_t classes, int variant)
      : in_channels_(in_channels), classes_(classes), variant_(variant) {}
  TORCH_ARG(int64_t, in_channels);
  TORCH_ARG(int64_t, classes);
  TORCH_ARG(int, variant);  // 0 ... 5: B0 ... B5
  TORCH_ARG(bool, checkpoint) = false;
};

struct SegformerImpl : SegmentationModelImpl {
  explicit SegformerImpl(const SegformerOptions& options);
  torch::Tensor forward(torch::Tensor images) override;
  void setCheckpointing(bool enabled) override { options.checkpoint(enabled); }
  bool checkpointing() const override { return options.checkpoint(); }
  std::vector<torch::Tensor> encoderParameters() override { return encoder->parameters(); }
  // The Mix Transformer's weights: smp's encoder (encoder.*), NVIDIA's mit_bN.pth (its
  // classification head left out) or Hugging Face's SegformerModel/
  // SegformerForSemanticSegmentation (segformer.encoder.*, renamed; their key and value
  // joined into kv), from a torch.save file or a safetensors file.
  std::vector<std::string> loadPretrainedEncoder(const std::string& path) override;

  SegformerOptions options;
  MixTransformer encoder{nullptr};
  SegformerDecoder decoder{nullptr};
  torch::nn::Sequential segmentation_head{nullptr};
};

// Hugging Face's names of a Mix Transformer (segformer.encoder.block.0.1.attention.self.query
// ...) as smp's (block1.1.attn.q ...), their separate key and value joined into kv; other
// names pass unchanged. For pretrained encoders.
std::map<std::string, torch::Tensor> mixTransformerFromHuggingFace(const std::map<std::string, torch::Tensor>& weights);

}  // namespace geodl
