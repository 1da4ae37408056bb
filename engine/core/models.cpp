#include "core/models.h"

#include <fstream>
#include <iterator>

#include "base/errors.h"
#include "base/file_kind.h"

#include "core/deeplab.h"
#include "core/dofa.h"
#include "core/resnet_unet.h"
#include "core/segformer.h"
#include "core/ternausnet.h"
#include "core/torch_save_file.h"
#include "core/unet.h"

namespace geodl {

c10::Dict<c10::IValue, c10::IValue> readTorchSavedDict(const std::string& path, const std::string& what,
                                                       const std::string& where, const std::string& fix) {
  checkReadableFile(path, "the " + what);
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError("cannot read the " + what + " '" + path + "': check the path" + where);
  if (isSafetensorsFile(path)) return readSafetensorsFile(path);
  if (isLegacyTorchSaveFile(path)) {  // LibTorch reads only the zip format
    const c10::IValue value = readTorchSaveFile(path);
    if (!value.isGenericDict()) throw InputError("'" + path + "' holds no dictionary of tensors; " + fix);
    return value.toGenericDict();
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  c10::IValue value;
  try {
    value = torch::pickle_load(bytes);
  } catch (const c10::Error&) {
    // LibTorch's unpickler cannot build an OrderedDict (torch.save(model.state_dict(), f)):
    // GeoDL's reads it (and says what it cannot read, naming the file).
    value = readTorchSaveFile(path);
  }
  if (!value.isGenericDict()) throw InputError("'" + path + "' holds no dictionary of tensors; " + fix);
  return value.toGenericDict();
}

SegmentationModel makeModel(const ModelSpec& spec) {
  validate(spec);
  switch (spec.architecture) {
    case Architecture::UNet:
    case Architecture::UNetSmall: {
      auto options = UNetOptions(spec.bands, spec.classes)
                         .widths(spec.architecture == Architecture::UNet ? unetWidths()
                                                                         : unetSmallWidths())
                         .dropout(spec.dropout)
                         .probability(spec.dropout_probability)
                         .checkpoint(spec.checkpoint);
      return std::make_shared<UNetImpl>(options);
    }
    case Architecture::TernausNet: {
      auto options = TernausNetOptions(spec.bands, spec.classes)
                         .dropout(spec.dropout)
                         .probability(spec.dropout_probability)
                         .checkpoint(spec.checkpoint);
      auto model = std::make_shared<TernausNetImpl>(options);
      if (!spec.pretrained.empty()) model->loadVgg11Encoder(spec.pretrained);
      return model;
    }
    case Architecture::ResNet18UNet:
    case Architecture::ResNet34UNet:
    case Architecture::ResNet50UNet:
    case Architecture::ResNet34UNetPlusPlus:
    case Architecture::DeepLabV3ResNet50:
    case Architecture::DeepLabV3PlusResNet50: {
      const auto options =
          ResNetModelOptions(spec.bands, spec.classes, resnetDepth(spec.architecture)).checkpoint(spec.checkpoint);
      if (spec.architecture == Architecture::ResNet34UNetPlusPlus) return std::make_shared<ResNetUNetPlusPlusImpl>(options);
      if (spec.architecture == Architecture::DeepLabV3ResNet50) return std::make_shared<DeepLabV3Impl>(options);
      if (spec.architecture == Architecture::DeepLabV3PlusResNet50) return std::make_shared<DeepLabV3PlusImpl>(options);
      return std::make_shared<ResNetUNetImpl>(options);
    }
    case Architecture::SegFormerB0:
    case Architecture::SegFormerB1:
    case Architecture::SegFormerB2:
    case Architecture::SegFormerB3:
    case Architecture::SegFormerB4:
    case Architecture::SegFormerB5:
      return std::make_shared<SegformerImpl>(
          SegformerOptions(spec.bands, spec.classes, segformerVariant(spec.architecture)).checkpoint(spec.checkpoint));
    case Architecture::DofaBase:
    case Architecture::DofaLarge:
      return std::make_shared<DofaImpl>(DofaOptions(spec.bands, spec.classes, spec.architecture == Architecture::DofaLarge)
                                            .wavelengths(spec.wavelengths)
                                            .checkpoint(spec.checkpoint));
  }
  throw std::logic_error("unhandled architecture");
}

void toChannelsLast(torch::nn::Module& model) {
  torch::NoGradGuard no_grad;
  for (auto& p : model.parameters())
    if (p.dim() == 4) p.set_data(p.contiguous(at::MemoryFormat::ChannelsLast));
  for (auto& b : model.buffers())
    if (b.dim() == 4) b.set_data(b.contiguous(at::MemoryFormat::ChannelsLast));
}

}  // namespace geodl
