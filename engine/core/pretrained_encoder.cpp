#include "core/pretrained_encoder.h"

#include <algorithm>
#include <sstream>

#include "base/errors.h"
#include "core/models.h"

namespace geodl {

torch::Tensor adaptFirstConvolution(const torch::Tensor& rgb, int64_t bands) {
  torch::Tensor adapted = rgb.mean(1, true).expand({rgb.size(0), bands, rgb.size(2), rgb.size(3)}).clone();
  const int64_t n = std::min<int64_t>(3, bands);
  adapted.narrow(1, 0, n).copy_(rgb.narrow(1, 0, n));
  return adapted * (3.0 / double(bands));
}

std::vector<std::string> loadEncoderWeights(torch::nn::Module& encoder, const std::string& path,
                                            const EncoderWeights& what) {
  const auto dict = readTorchSavedDict(path, "pretrained encoder file", "", what.expected);
  std::map<std::string, torch::Tensor> weights;
  for (const auto& entry : dict)
    if (entry.key().isString() && entry.value().isTensor()) weights[entry.key().toStringRef()] = entry.value().toTensor();
  if (what.rename) weights = what.rename(weights);
  std::map<std::string, torch::Tensor> named;
  for (auto& [key, tensor] : weights) {
    std::string name = key;
    for (const auto& prefix : what.prefixes)
      if (name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
    named[name] = tensor;
  }
  std::vector<std::string> log;
  torch::NoGradGuard no_grad;
  const auto load = [&](const std::string& name, torch::Tensor& target) {
    auto it = named.find(name);
    if (it == named.end())
      throw InputError("the pretrained encoder file '" + path + "' has no '" + name + "'; " + what.expected);
    torch::Tensor source = it->second.to(target.scalar_type());
    if (name == what.first_convolution && source.dim() == 4 && source.size(1) == 3 && target.size(1) != 3) {
      source = adaptFirstConvolution(source, target.size(1));
      log.push_back("the first convolution's RGB filters adapted to " + std::to_string(target.size(1)) +
                    " bands (extra bands: their mean; all scaled by 3/" + std::to_string(target.size(1)) + ")");
    }
    if (source.sizes() != target.sizes()) {
      std::ostringstream msg;
      msg << "the pretrained encoder file '" << path << "' gives '" << name << "' the shape " << source.sizes()
          << " but " << what.family << "'s needs " << target.sizes() << "; " << what.expected;
      throw InputError(msg.str());
    }
    target.copy_(source);
  };
  size_t loaded = 0;
  for (auto& p : encoder.named_parameters()) load(p.key(), p.value()), ++loaded;
  for (auto& b : encoder.named_buffers()) load(b.key(), b.value()), ++loaded;
  log.insert(log.begin(), std::to_string(loaded) + " " + what.family + " encoder tensors loaded from " + path);
  return log;
}

}  // namespace geodl
