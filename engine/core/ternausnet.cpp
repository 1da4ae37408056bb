#include "core/ternausnet.h"


#include "core/checkpoint.h"
#include "core/unet_functions.h"
#include "base/errors.h"

namespace geodl {

namespace nn = torch::nn;
using torch::Tensor;

namespace {

nn::Conv2d conv3x3(int64_t in, int64_t out) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, 3).padding(1));
}

// Indices of the convolutions in torchvision's vgg11().features.
const std::vector<int> kVggConvIndices = {0, 3, 6, 8, 11, 13, 16, 18};

}  // namespace

TernausDecoderBlockImpl::TernausDecoderBlockImpl(int64_t in, int64_t middle, int64_t out) {
  block = register_module(
      "block", nn::Sequential(conv3x3(in, middle), nn::ReLU(),
                              nn::ConvTranspose2d(nn::ConvTranspose2dOptions(middle, out, 3)
                                                      .stride(2)
                                                      .padding(1)
                                                      .output_padding(1)),
                              nn::ReLU()));
}

namespace {

// The input spread on a grid twice as fine: zeros between the pixels, one row and column of
// zeros before, two after; in the input's layout.
Tensor spread(const Tensor& x) {
  const auto n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  Tensor out = torch::zeros({n, c, 2 * h + 2, 2 * w + 2}, x.options().memory_format(x.suggest_memory_format()));
  out.slice(2, 1, 2 * h, 2).slice(3, 1, 2 * w, 2).copy_(x);
  return out;
}

// Keeps only the input for backward and spreads it again there: the spread copy is four
// times the input, and LibTorch's own transposed convolution keeps no more than the input.
struct SpreadConvFunction : torch::autograd::Function<SpreadConvFunction> {
  static Tensor forward(torch::autograd::AutogradContext* ctx, const Tensor& x,
                        const Tensor& weight, const Tensor& bias) {
    ctx->save_for_backward({x, weight});
    return torch::conv2d(spread(x), weight.transpose(0, 1).flip({2, 3}), bias);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const Tensor& x = saved[0];
    const Tensor kernel = saved[1].transpose(0, 1).flip({2, 3});
    Tensor spread_x = spread(x);
    auto [g_spread, g_kernel, g_bias] = at::convolution_backward(
        grads[0], spread_x, kernel, {{kernel.size(0)}}, {1, 1}, {0, 0}, {1, 1}, false, {0, 0}, 1,
        {ctx->needs_input_grad(0), true, true});
    spread_x.reset();
    Tensor g_x;
    if (g_spread.defined())
      g_x = g_spread.slice(2, 1, 2 * x.size(2), 2).slice(3, 1, 2 * x.size(3), 2).contiguous();
    return {g_x, g_kernel.flip({2, 3}).transpose(0, 1), g_bias};
  }
};

}  // namespace

Tensor transposedConvAsConv(const Tensor& x, const nn::ConvTranspose2dImpl& t) {
  // ConvTranspose2d(k 3, stride 2, padding 1, output padding 1) is a plain 3x3 convolution
  // of the spread input by the transposed, flipped kernel. LibTorch 1.13 runs the plain
  // convolution through oneDNN and the transposed one without it, some 25x slower.
  return SpreadConvFunction::apply(x, t.weight, t.bias);
}

Tensor TernausDecoderBlockImpl::forward(const Tensor& x) {
  auto* conv = block->ptr(0)->as<nn::Conv2dImpl>();
  auto* up = block->ptr(2)->as<nn::ConvTranspose2dImpl>();
  return torch::relu(transposedConvAsConv(torch::relu(conv->forward(x)), *up));
}

TernausNetImpl::TernausNetImpl(const TernausNetOptions& opts) : options(opts) {
  const int64_t f = options.num_filters();
  // Same layout as torchvision's VGG11 features, so pretrained keys map one to one.
  encoder = nn::Sequential();
  const std::vector<std::pair<int64_t, int64_t>> convs = {
      {options.in_channels(), 64}, {64, 128}, {128, 256}, {256, 256},
      {256, 512}, {512, 512}, {512, 512}, {512, 512}};
  size_t next_conv = 0;
  for (int index = 0; index <= 20; ++index) {
    if (next_conv < kVggConvIndices.size() && index == kVggConvIndices[next_conv]) {
      encoder->push_back(conv3x3(convs[next_conv].first, convs[next_conv].second));
      ++next_conv;
    } else if (index == 2 || index == 5 || index == 10 || index == 15 || index == 20) {
      encoder->push_back(nn::MaxPool2d(nn::MaxPool2dOptions(2).stride(2)));
    } else {
      encoder->push_back(nn::ReLU());
    }
  }
  register_module("encoder", encoder);
  center = register_module("center", TernausDecoderBlock(f * 16, f * 16, f * 8));
  dec5 = register_module("dec5", TernausDecoderBlock(f * (16 + 8), f * 16, f * 8));
  dec4 = register_module("dec4", TernausDecoderBlock(f * (16 + 8), f * 16, f * 4));
  dec3 = register_module("dec3", TernausDecoderBlock(f * (8 + 4), f * 8, f * 2));
  dec2 = register_module("dec2", TernausDecoderBlock(f * (4 + 2), f * 4, f));
  dec1 = register_module("dec1", nn::Sequential(conv3x3(f * (2 + 1), f), nn::ReLU()));
  final = register_module("final", nn::Conv2d(nn::Conv2dOptions(f, options.classes(), 1)));
}

// Inference (CPU, no autograd): the same layers with the ReLUs in place and each skip let go
// once its decoder has read it: 13% less memory (1.82 against 2.10 GiB classifying 1536²
// at the defaults), as fast. TernausNet has no BatchNorm to fold. Channels last, the UNets'
// layout, measured 12% slower here (23.5 against 21.0 s, best of three; VGG's wide
// convolutions and the spread transposed convolution), so the layout stays the input's.
Tensor TernausNetImpl::inferenceForward(const Tensor& images) {
  const auto conv = [this](int index) { return encoder->ptr(index)->as<nn::Conv2dImpl>(); };
  const auto convRelu = [&](int index, const Tensor& in, bool pool) {
    return conv(index)->forward(pool ? torch::max_pool2d(in, 2, 2) : in).relu_();
  };
  const auto decode = [](TernausDecoderBlockImpl& block, const Tensor& in) {
    auto* c = block.block->ptr(0)->as<nn::Conv2dImpl>();
    auto* up = block.block->ptr(2)->as<nn::ConvTranspose2dImpl>();
    return transposedConvAsConv(c->forward(in).relu_(), *up).relu_();
  };
  Tensor conv1 = convRelu(0, images, false);
  Tensor conv2 = convRelu(3, conv1, true);
  Tensor conv3 = convRelu(8, convRelu(6, conv2, true), false);
  Tensor conv4 = convRelu(13, convRelu(11, conv3, true), false);
  Tensor conv5 = convRelu(18, convRelu(16, conv4, true), false);
  Tensor h = decode(*center, torch::max_pool2d(conv5, 2, 2));
  h = decode(*dec5, torch::cat({h, conv5}, 1));
  conv5 = Tensor();
  h = decode(*dec4, torch::cat({h, conv4}, 1));
  conv4 = Tensor();
  h = decode(*dec3, torch::cat({h, conv3}, 1));
  conv3 = Tensor();
  h = decode(*dec2, torch::cat({h, conv2}, 1));
  conv2 = Tensor();
  h = dec1->forward(torch::cat({h, conv1}, 1));
  return final->forward(h).contiguous();
}

Tensor TernausNetImpl::forward(Tensor x) {
  if (!is_training() && unet_ops::fusedInference(x)) return inferenceForward(x);
  const bool lean = options.checkpoint() && is_training() && torch::GradMode::is_enabled();
  const double p = options.dropout() && is_training() ? options.probability() : 0.0;
  // Runs one stage, checkpointed when asked; `module` holds the stage's parameters.
  auto stage = [&](nn::Module& module, const std::vector<Tensor>& inputs, const CheckpointFn& fn) {
    return lean ? checkpoint(fn, inputs, module) : fn(inputs);
  };
  // The stage functions run again during backward, after forward() has returned: they
  // capture module pointers and values, never references to locals.
  auto conv = [this](int index) { return encoder->ptr(index)->as<nn::Conv2dImpl>(); };
  auto convRelu = [](nn::Conv2dImpl* c, bool pool_first) -> CheckpointFn {
    return [c, pool_first](const std::vector<Tensor>& in) {
      return torch::relu(c->forward(pool_first ? torch::max_pool2d(in[0], 2, 2) : in[0]));
    };
  };
  auto decoder = [p](TernausDecoderBlockImpl* block, bool pool_first) -> CheckpointFn {
    return [block, p, pool_first](const std::vector<Tensor>& in) {
      Tensor h = in.size() == 1 ? in[0] : torch::cat(in, 1);
      Tensor out = block->forward(pool_first ? torch::max_pool2d(h, 2, 2) : h);
      return p > 0.0 ? torch::dropout(out, p, true) : out;
    };
  };
  Tensor conv1 = stage(*conv(0), {x}, convRelu(conv(0), false));
  Tensor conv2 = stage(*conv(3), {conv1}, convRelu(conv(3), true));
  Tensor conv3s = stage(*conv(6), {conv2}, convRelu(conv(6), true));
  Tensor conv3 = stage(*conv(8), {conv3s}, convRelu(conv(8), false));
  Tensor conv4s = stage(*conv(11), {conv3}, convRelu(conv(11), true));
  Tensor conv4 = stage(*conv(13), {conv4s}, convRelu(conv(13), false));
  Tensor conv5s = stage(*conv(16), {conv4}, convRelu(conv(16), true));
  Tensor conv5 = stage(*conv(18), {conv5s}, convRelu(conv(18), false));
  Tensor c = stage(*center, {conv5}, decoder(center.get(), true));
  Tensor d5 = stage(*dec5, {c, conv5}, decoder(dec5.get(), false));
  Tensor d4 = stage(*dec4, {d5, conv4}, decoder(dec4.get(), false));
  Tensor d3 = stage(*dec3, {d4, conv3}, decoder(dec3.get(), false));
  Tensor d2 = stage(*dec2, {d3, conv2}, decoder(dec2.get(), false));
  auto* last = dec1.get();
  Tensor d1 = stage(*dec1, {d2, conv1}, [last](const std::vector<Tensor>& in) {
    return last->forward(torch::cat(in, 1));
  });
  return final->forward(d1);
}

void TernausNetImpl::loadVgg11Encoder(const std::string& path) {
  auto dict = readTorchSavedDict(path, "pretrained encoder file", " (see README, \"Pretrained weights\")",
                                 "save vgg11().features' state_dict as a dict (see README, \"Pretrained weights\")");
  torch::NoGradGuard no_grad;
  for (int index : kVggConvIndices) {
    auto* c = encoder->ptr(index)->as<nn::Conv2dImpl>();
    for (const char* what : {"weight", "bias"}) {
      const std::string key = std::to_string(index) + "." + what;
      if (!dict.contains(key))
        throw InputError("the pretrained encoder file '" + path + "' has no '" + key + "'");
      Tensor source = dict.at(key).toTensor().to(torch::kFloat);
      Tensor& target = std::string(what) == "weight" ? c->weight : c->bias;
      if (index == 0 && std::string(what) == "weight" && source.dim() == 4 &&
          source.size(1) == 3 && target.size(1) != 3) {
        // Other than RGB: copy the RGB filters to the first bands, their mean to the rest.
        Tensor adapted = source.mean(1, true).expand_as(target).clone();
        const int64_t n = std::min<int64_t>(3, target.size(1));
        adapted.narrow(1, 0, n).copy_(source.narrow(1, 0, n));
        source = adapted;
      }
      if (source.sizes() != target.sizes()) {
        std::ostringstream msg;
        msg << "the pretrained encoder file '" << path << "' gives '" << key << "' the shape "
            << source.sizes() << " but the model needs " << target.sizes()
            << ": it must hold torchvision's vgg11().features weights";
        throw InputError(msg.str());
      }
      target.copy_(source);
    }
  }
}

}  // namespace geodl
