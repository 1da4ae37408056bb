// Pretrained encoder weights (training.pretrained_encoder), for every model with an encoder:
// the file read (torch.save, safetensors), names mapped and prefixes taken off, every
// parameter and buffer of the encoder checked by name and shape, the first convolution
// adapted to the bands.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace geodl {

struct EncoderWeights {
  std::string family;    // what the log and the messages call the encoder: "resnet34", "mit_b2"
  std::string expected;  // what the file must hold, ending the messages: "it must hold ..."
  std::string first_convolution;  // the RGB filters adapted to other band counts
  std::vector<std::string> prefixes;  // taken off every name that starts with one, in order
  // Names of other layouts as the encoder's (before the prefixes are taken off); none: as they are.
  std::function<std::map<std::string, torch::Tensor>(const std::map<std::string, torch::Tensor>&)> rename;
};

// RGB filters (out, 3, k, k) for `bands` bands: the first min(bands, 3) keep theirs, extra
// bands get the mean of the three, and all are scaled by 3 / bands, so that an image whose
// bands are alike gives the activations the RGB filters gave.
torch::Tensor adaptFirstConvolution(const torch::Tensor& rgb, int64_t bands);

// Loads every parameter and buffer of `encoder` from the pretrained-encoder file `path`.
// InputError names the first name missing or of another shape (both shapes). Returns what the
// log says: "<n> <family> encoder tensors loaded from <path>", and the adaptation of the first
// convolution (see adaptFirstConvolution) when the model has other than 3 bands.
std::vector<std::string> loadEncoderWeights(torch::nn::Module& encoder, const std::string& path,
                                            const EncoderWeights& what);

}  // namespace geodl
