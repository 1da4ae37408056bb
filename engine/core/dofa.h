// DOFA (dofa_base, dofa_large): TorchGeo 0.7's DOFA encoder, a ViT-B/16 or ViT-L/16 whose
// patch embedding is generated from each band's wavelength, so that one set of weights takes
// any bands; with geo-deep-learning's multi-level neck and segmentation-models-pytorch 0.6's
// UPerNet decoder. tests/reference/dofa_torchgeo.py builds the same model from the libraries.
//
// Encoder (names encoder.*, TorchGeo's): the patch embedding (patch_embed) turns the bands'
// wavelengths (micrometres) into the weights of a 16 x 16 convolution of stride 16 (padding 1,
// as TorchGeo has it): a sine-cosine code of each wavelength in nanometres (128 values),
// through a residual MLP (fclayer: w1, ReLU, w2, ReLU, added), then a transformer encoder
// layer (weight_generator.transformer_encoder.layers.0: torch.nn.TransformerEncoderLayer,
// 4 heads, GELU, post-norm) over 128 weight tokens, the bands' codes and a bias token;
// fc_weight makes each band's 16 x 16 x width filter from its output (plus its code), fc_bias
// the bias from the bias token's, both scaled by 0.01. Then a class token, the position
// embedding of the 224 x 224 pretraining grid (14 x 14 patches and the class token's; fixed,
// a buffer) resampled to the window's grid as timm's resample_abs_pos_embed does (bicubic,
// antialiased), and the ViT blocks (timm's Block: x + attn(norm1(x)), x + mlp(norm2(x)),
// LayerNorm eps 1e-6, qkv with bias, GELU MLP 4x wide). Widths 768 / 1024, depths 12 / 24,
// heads 12 / 16. The tokens of blocks 3, 5, 7, 11 (base) or 7, 11, 15, 23 (large), as images
// of a 16th of the window, feed the neck.
//
// Neck (neck.*, geo-deep-learning's MultiLevelNeck): per level a conv 1x1 with BatchNorm and
// ReLU (lateral_convs.i), resized bilinearly by 4, 2, 1 and 0.5, then a conv 3x3 with
// BatchNorm and ReLU (convs.i): features at a quarter ... a 32nd of the window.
//
// Decoder (decoder.*, smp's UPerNetDecoder, 256 channels): a channel LayerNorm per level
// (feature_norms), the pyramid pooling module (psp: pools 1, 2, 3, 6) on the coarsest, the
// FPN's top-down path (fpn_lateral_blocks, fpn_conv_blocks), all resized to a quarter and
// fused (fusion_block); every conv without bias, with BatchNorm and ReLU. The head
// (segmentation_head.0) is a conv 1x1, resized bilinearly (align_corners false) to the window.
//
// Sides that are not multiples of 16 are padded (padToMultiple) and the logits cropped back.
// Checkpointing recomputes each transformer block, and the neck with the decoder, in backward.
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

#include "core/models.h"

namespace geodl {

struct DofaShape {
  int64_t width, depth, heads;
  std::vector<int64_t> feature_blocks;  // the blocks whose tokens feed the neck
};
DofaShape dofaShape(bool large);

// The position embedding (1, 1 + h*w, C) of an h x w grid (the class token's first) for
// another grid, as timm's resample_abs_pos_embed does it: bicubic, antialiased, in float.
torch::Tensor resamplePositionEmbedding(const torch::Tensor& embedding, int64_t from_h, int64_t from_w,
                                        int64_t to_h, int64_t to_w);

// The sine-cosine code (M, dim) of positions (M): sin(p * w_i), then cos(p * w_i), for
// w_i = 10000^(-2i / dim), as TorchGeo's position_embedding.
torch::Tensor sineCosineCode(int64_t dim, const torch::Tensor& positions);

// torch.nn.MultiheadAttention's parameters (in_proj_weight, in_proj_bias, out_proj), as
// self-attention on tokens (N, L, C).
struct PackedAttentionImpl : torch::nn::Module {
  PackedAttentionImpl(int64_t dim, int64_t heads);
  torch::Tensor forward(const torch::Tensor& x);
  int64_t heads;
  torch::Tensor in_proj_weight, in_proj_bias;
  torch::nn::Linear out_proj{nullptr};
};
TORCH_MODULE(PackedAttention);

// torch.nn.TransformerEncoderLayer with norm_first false, GELU, no dropout.
struct PostNormEncoderLayerImpl : torch::nn::Module {
  PostNormEncoderLayerImpl(int64_t dim, int64_t heads, int64_t feedforward);
  torch::Tensor forward(const torch::Tensor& x);
  PackedAttention self_attn{nullptr};
  torch::nn::Linear linear1{nullptr}, linear2{nullptr};
  torch::nn::LayerNorm norm1{nullptr}, norm2{nullptr};
};
TORCH_MODULE(PostNormEncoderLayer);

// TorchGeo's TransformerWeightGenerator: the convolution's weights and bias from the bands'
// codes.
struct WeightGeneratorImpl : torch::nn::Module {
  WeightGeneratorImpl(int64_t code, int64_t weights, int64_t width);
  // Codes (bands, code): weights (bands, weights) and bias (width).
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& codes);
  torch::Tensor weight_tokens, bias_token;
  torch::nn::ModuleList layers{nullptr};  // transformer_encoder.layers: one PostNormEncoderLayer
  torch::nn::Linear fc_weight{nullptr}, fc_bias{nullptr};
};
TORCH_MODULE(WeightGenerator);

// TorchGeo's FCResLayer: x + relu(w2(relu(w1(x)))).
struct ResidualMlpImpl : torch::nn::Module {
  explicit ResidualMlpImpl(int64_t dim);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::Linear w1{nullptr}, w2{nullptr};
};
TORCH_MODULE(ResidualMlp);

// TorchGeo's DOFAEmbedding (patch_embed).
struct DofaEmbeddingImpl : torch::nn::Module {
  DofaEmbeddingImpl(int64_t width, int64_t patch);
  // Tokens (N, h*w, width) of images (N, bands, H, W) with `wavelengths` (bands, micrometres).
  torch::Tensor forward(const torch::Tensor& images, const torch::Tensor& wavelengths);
  int64_t width, patch;
  WeightGenerator weight_generator{nullptr};
  ResidualMlp fclayer{nullptr};
};
TORCH_MODULE(DofaEmbedding);

// timm's Block (ViT).
struct VitBlockImpl : torch::nn::Module {
  VitBlockImpl(int64_t dim, int64_t heads);
  torch::Tensor forward(const torch::Tensor& x);
  int64_t heads;
  torch::nn::LayerNorm norm1{nullptr}, norm2{nullptr};
  torch::nn::Linear qkv{nullptr}, proj{nullptr}, fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE(VitBlock);

// TorchGeo's DOFA without its classification head and norm.
struct DofaEncoderImpl : torch::nn::Module {
  explicit DofaEncoderImpl(const DofaShape& shape);
  // The feature blocks' tokens as images (N, width, h, w); lean: each block checkpointed.
  std::vector<torch::Tensor> forward(const torch::Tensor& images, const torch::Tensor& wavelengths, bool lean);
  DofaShape shape;
  DofaEmbedding patch_embed{nullptr};
  torch::Tensor cls_token, pos_embed;  // pos_embed: a buffer (fixed, as TorchGeo's)
  torch::nn::ModuleList blocks{nullptr};
};
TORCH_MODULE(DofaEncoder);

// geo-deep-learning's MultiLevelNeck: levels of one size at 4, 2, 1 and 0.5 times it.
struct MultiLevelNeckImpl : torch::nn::Module {
  explicit MultiLevelNeckImpl(int64_t width, std::vector<double> scales = {4, 2, 1, 0.5});
  std::vector<torch::Tensor> forward(const std::vector<torch::Tensor>& levels);
  std::vector<double> scales;
  torch::nn::ModuleList lateral_convs{nullptr}, convs{nullptr};  // each: conv, norm (ReLU after)
};
TORCH_MODULE(MultiLevelNeck);

// smp's UPerNetDecoder on four levels (a quarter ... a 32nd), each of `width` channels.
struct UperNetDecoderImpl : torch::nn::Module {
  UperNetDecoderImpl(const std::vector<int64_t>& widths, int64_t channels = 256);
  torch::Tensor forward(std::vector<torch::Tensor> levels);
  torch::nn::ModuleList feature_norms{nullptr}, fpn_lateral_blocks{nullptr}, fpn_conv_blocks{nullptr};
  torch::nn::Sequential fusion_block{nullptr};
  torch::nn::ModuleList psp_blocks{nullptr};  // psp.blocks
  torch::nn::Sequential psp_out_conv{nullptr};  // psp.out_conv
};
TORCH_MODULE(UperNetDecoder);

struct DofaOptions {
  DofaOptions(int64_t in_channels, int64_t classes, bool large)
      : in_channels_(in_channels), classes_(classes), large_(large) {}
  TORCH_ARG(int64_t, in_channels);
  TORCH_ARG(int64_t, classes);
  TORCH_ARG(bool, large);
  // The bands' wavelengths (micrometres), one per band.
  TORCH_ARG(std::vector<double>, wavelengths);
  TORCH_ARG(bool, checkpoint) = false;
};

struct DofaImpl : SegmentationModelImpl {
  explicit DofaImpl(const DofaOptions& options);
  torch::Tensor forward(torch::Tensor images) override;
  void setCheckpointing(bool enabled) override { options.checkpoint(enabled); }
  bool checkpointing() const override { return options.checkpoint(); }
  std::vector<torch::Tensor> encoderParameters() override { return encoder->parameters(); }
  // TorchGeo's DOFA weights (its DOFABase16_Weights / DOFALarge16_Weights files, or the
  // DOFA authors' DOFA_ViT_*_e100.pth: their classification head, norm, mask token and
  // projector left out), or GeoDL's encoder (encoder.*), from a torch.save or safetensors
  // file. A position embedding of another grid is resampled to 14 x 14.
  std::vector<std::string> loadPretrainedEncoder(const std::string& path) override;

  DofaOptions options;
  DofaEncoder encoder{nullptr};
  MultiLevelNeck neck{nullptr};
  UperNetDecoder decoder{nullptr};
  torch::nn::Sequential segmentation_head{nullptr};
  torch::Tensor wavelengths;  // options' wavelengths as a tensor (not saved: the model file has them)
  // The neck and the decoder as one module (not registered: their names stay neck.*,
  // decoder.*), which checkpointing recomputes.
  std::shared_ptr<torch::nn::Module> neck_and_decoder;
};

}  // namespace geodl
