// What a segmentation model is, without LibTorch: architecture and options by name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace geodl {

enum class Architecture {
  UNet,
  UNetSmall,
  TernausNet,
  ResNet18UNet,
  ResNet34UNet,
  ResNet50UNet,
  ResNet34UNetPlusPlus,
  DeepLabV3ResNet50,
  DeepLabV3PlusResNet50,
  SegFormerB0,
  SegFormerB1,
  SegFormerB2,
  SegFormerB3,
  SegFormerB4,
  SegFormerB5,
  DofaBase,
  DofaLarge
};

// The sample (and window) sizes the networks take: at least 8 pixels (three poolings), and
// the largest the option tables accept.
constexpr int kMinSampleSize = 8, kMaxSampleSize = 100000;
// The wavelengths a band may have, in micrometres: ultraviolet to thermal infrared (and DOFA's
// radar bands, which it codes at 3.75).
constexpr double kMinWavelength = 0.01, kMaxWavelength = 20.0;

struct ModelSpec {
  Architecture architecture = Architecture::UNetSmall;
  int bands = 3;
  int classes = 2;
  bool dropout = false;
  double dropout_probability = 0.5;
  // Recompute activations during backward instead of keeping them.
  bool checkpoint = false;
  // TernausNet only: file with VGG11 encoder weights (see README, "Pretrained weights").
  std::string pretrained;
  // The bands' central wavelengths in micrometres (empty: not known). DOFA needs them: its
  // patch embedding is made from them.
  std::vector<double> wavelengths;
};

// The names accepted in configs and on the command line, geo-deep-learning's included.
const std::vector<std::string>& modelNames();

// Parses a model name into a spec (bands/classes left at their defaults).
// `checkpointed_unet` means unetsmall with checkpointing. Throws InputError listing the
// valid names when the name is unknown.
ModelSpec modelSpecFromName(const std::string& name);

// The canonical name of an architecture (unet, unetsmall, ternausnet, resnet18_unet...).
std::string architectureName(Architecture architecture);

// Whether the architecture is built on torchvision's ResNet (pretrained_encoder applies),
// and its depth (18, 34 or 50; 0 for the others).
bool hasResNetEncoder(Architecture architecture);
int resnetDepth(Architecture architecture);
// The smallest batch the architecture trains on: 2 for the DeepLabs (the BatchNorm after
// the ASPP's image pooling sees one value per channel and sample), else 1.
int minimumTrainingBatch(Architecture architecture);
// SegFormer's variant (0-5 for B0-B5), -1 for the others.
int segformerVariant(Architecture architecture);
// Whether the architecture is DOFA (dofa_base, dofa_large), which needs the bands' wavelengths.
bool isDofa(Architecture architecture);
// Whether training.pretrained_encoder applies: the models on a ResNet, Mix Transformer or DOFA
// encoder; their names, separated by ", ".
bool hasPretrainedEncoder(Architecture architecture);
std::string pretrainedEncoderModelNames();

// Throws InputError when bands, classes or the dropout probability are out of range, or a
// wavelength is (DOFA: one per band, each from kMinWavelength to kMaxWavelength).
void validate(const ModelSpec& spec);
// Throws InputError unless `wavelengths` is empty or one value per band, each from
// kMinWavelength to kMaxWavelength micrometres; the message names the band and the fix.
void validateWavelengths(const std::vector<double>& wavelengths, int bands);

// Gives a DOFA spec without wavelengths some (0.5 micrometres each), for what does not depend
// on their values: parameter counts, memory and time.
void fillPlaceholderWavelengths(ModelSpec& spec);

// Number of trainable parameters of the model the spec describes.
int64_t parameterCount(const ModelSpec& spec);

}  // namespace geodl
