#include "core/model_spec.h"

#include <algorithm>
#include <sstream>

#include "base/errors.h"
#include "core/models.h"

namespace geodl {

const std::vector<std::string>& modelNames() {
  // New names go at the end: QGIS saves the model parameter as an index into this list.
  static const std::vector<std::string> names = {"unet",
                                                 "unetsmall",
                                                 "checkpointed_unet",
                                                 "ternausnet",
                                                 "resnet18_unet",
                                                 "resnet34_unet",
                                                 "resnet50_unet",
                                                 "resnet34_unetplusplus",
                                                 "deeplabv3_resnet50",
                                                 "deeplabv3plus_resnet50",
                                                 "segformer_b0",
                                                 "segformer_b1",
                                                 "segformer_b2",
                                                 "segformer_b3",
                                                 "segformer_b4",
                                                 "segformer_b5",
                                                 "dofa_base",
                                                 "dofa_large"};
  return names;
}

namespace {
// Every architecture, in the enum's order.
constexpr Architecture kArchitectures[] = {
    Architecture::UNet,         Architecture::UNetSmall,           Architecture::TernausNet,
    Architecture::ResNet18UNet, Architecture::ResNet34UNet,        Architecture::ResNet50UNet,
    Architecture::ResNet34UNetPlusPlus, Architecture::DeepLabV3ResNet50,
    Architecture::DeepLabV3PlusResNet50, Architecture::SegFormerB0, Architecture::SegFormerB1,
    Architecture::SegFormerB2, Architecture::SegFormerB3, Architecture::SegFormerB4, Architecture::SegFormerB5,
    Architecture::DofaBase,    Architecture::DofaLarge};
}  // namespace

std::string architectureName(Architecture architecture) {
  switch (architecture) {
    case Architecture::UNet: return "unet";
    case Architecture::UNetSmall: return "unetsmall";
    case Architecture::TernausNet: return "ternausnet";
    case Architecture::ResNet18UNet: return "resnet18_unet";
    case Architecture::ResNet34UNet: return "resnet34_unet";
    case Architecture::ResNet50UNet: return "resnet50_unet";
    case Architecture::ResNet34UNetPlusPlus: return "resnet34_unetplusplus";
    case Architecture::DeepLabV3ResNet50: return "deeplabv3_resnet50";
    case Architecture::DeepLabV3PlusResNet50: return "deeplabv3plus_resnet50";
    case Architecture::SegFormerB0:
    case Architecture::SegFormerB1:
    case Architecture::SegFormerB2:
    case Architecture::SegFormerB3:
    case Architecture::SegFormerB4:
    case Architecture::SegFormerB5: return "segformer_b" + std::to_string(segformerVariant(architecture));
    case Architecture::DofaBase: return "dofa_base";
    case Architecture::DofaLarge: return "dofa_large";
  }
  return "unknown";
}

ModelSpec modelSpecFromName(const std::string& name) {
  ModelSpec spec;
  if (name == "checkpointed_unet") {  // the one name that is not an architecture's
    spec.architecture = Architecture::UNetSmall;
    spec.checkpoint = true;
    return spec;
  }
  for (auto a : kArchitectures)
    if (name == architectureName(a)) {
      spec.architecture = a;
      return spec;
    }
  std::ostringstream msg;
  msg << "unknown model '" << name << "'; choose one of:";
  for (const auto& n : modelNames()) msg << ' ' << n;
  throw InputError(msg.str());
}

int resnetDepth(Architecture architecture) {
  switch (architecture) {
    case Architecture::ResNet18UNet: return 18;
    case Architecture::ResNet34UNet:
    case Architecture::ResNet34UNetPlusPlus: return 34;
    case Architecture::ResNet50UNet:
    case Architecture::DeepLabV3ResNet50:
    case Architecture::DeepLabV3PlusResNet50: return 50;
    default: return 0;
  }
}

bool hasResNetEncoder(Architecture architecture) { return resnetDepth(architecture) != 0; }

int segformerVariant(Architecture architecture) {
  const int variant = int(architecture) - int(Architecture::SegFormerB0);
  return variant >= 0 && variant <= 5 ? variant : -1;
}

bool isDofa(Architecture architecture) {
  return architecture == Architecture::DofaBase || architecture == Architecture::DofaLarge;
}

bool hasPretrainedEncoder(Architecture architecture) {
  return hasResNetEncoder(architecture) || segformerVariant(architecture) >= 0 || isDofa(architecture);
}

int minimumTrainingBatch(Architecture architecture) {
  // The BatchNorm after a pooling to 1 x 1 (the DeepLabs' ASPP, UPerNet's pyramid pooling)
  // sees one value per channel and sample.
  return architecture == Architecture::DeepLabV3ResNet50 || architecture == Architecture::DeepLabV3PlusResNet50 ||
                 isDofa(architecture)
             ? 2
             : 1;
}

std::string pretrainedEncoderModelNames() {
  std::string names;
  for (const auto& name : modelNames())
    if (hasPretrainedEncoder(modelSpecFromName(name).architecture)) names += (names.empty() ? "" : ", ") + name;
  return names;
}

void validate(const ModelSpec& spec) {
  if (spec.bands < 1)
    throw InputError("the number of bands must be at least 1 (got " + std::to_string(spec.bands) +
                     ")");
  if (spec.classes < 1)
    throw InputError("the number of classes must be at least 1 (got " +
                     std::to_string(spec.classes) + ")");
  if (spec.dropout && !(spec.dropout_probability >= 0.0 && spec.dropout_probability < 1.0))
    throw InputError("the dropout probability must be in [0, 1) (got " +
                     std::to_string(spec.dropout_probability) + ")");
  validateWavelengths(spec.wavelengths, spec.bands);
  if (isDofa(spec.architecture) && spec.wavelengths.empty())
    throw InputError(architectureName(spec.architecture) + " needs the central wavelength of each of the " +
                     std::to_string(spec.bands) +
                     " bands, in micrometres (DOFA makes its patch embedding from them): set the option "
                     "wavelengths (model.wavelengths, --wavelengths, WAVELENGTHS), e.g. 0.665,0.56,0.49 for red, "
                     "green, blue, or give rasters whose bands carry them");
}

void fillPlaceholderWavelengths(ModelSpec& spec) {
  if (isDofa(spec.architecture) && spec.wavelengths.empty()) spec.wavelengths.assign(size_t(std::max(spec.bands, 0)), 0.5);
}

void validateWavelengths(const std::vector<double>& wavelengths, int bands) {
  if (wavelengths.empty()) return;
  if (int(wavelengths.size()) != bands)
    throw InputError("the wavelengths give " + std::to_string(wavelengths.size()) + " values for " +
                     std::to_string(bands) + " bands: give one per band, in the bands' order, in micrometres");
  for (size_t b = 0; b < wavelengths.size(); ++b)
    if (!(wavelengths[b] >= kMinWavelength && wavelengths[b] <= kMaxWavelength)) {
      std::ostringstream msg;
      msg << "band " << b + 1 << "'s wavelength " << wavelengths[b] << " is not in micrometres: give a value from "
          << kMinWavelength << " to " << kMaxWavelength
          << " (e.g. 0.665 for red, 0.842 for near infrared; nanometres divided by 1000)";
      throw InputError(msg.str());
    }
}

int64_t parameterCount(const ModelSpec& spec) {
  ModelSpec plain = spec;
  plain.pretrained.clear();  // counting needs no weights
  fillPlaceholderWavelengths(plain);  // nor wavelengths
  auto model = makeModel(plain);
  int64_t count = 0;
  for (const auto& p : model->parameters()) count += p.numel();
  return count;
}

}  // namespace geodl
