#include "core/model_spec.h"

#include <sstream>

#include "base/errors.h"
#include "core/models.h"

namespace geodl {

const std::vector<std::string>& modelNames() {
  static const std::vector<std::string> names = {"unet", "unetsmall", "checkpointed_unet",
                                                 "ternausnet"};
  return names;
}

std::string architectureName(Architecture architecture) {
  switch (architecture) {
    case Architecture::UNet: return "unet";
    case Architecture::UNetSmall: return "unetsmall";
    case Architecture::TernausNet: return "ternausnet";
  }
  return "unknown";
}

ModelSpec modelSpecFromName(const std::string& name) {
  ModelSpec spec;
  if (name == "unet") {
    spec.architecture = Architecture::UNet;
  } else if (name == "unetsmall") {
    spec.architecture = Architecture::UNetSmall;
  } else if (name == "checkpointed_unet") {
    spec.architecture = Architecture::UNetSmall;
    spec.checkpoint = true;
  } else if (name == "ternausnet") {
    spec.architecture = Architecture::TernausNet;
  } else {
    std::ostringstream msg;
    msg << "unknown model '" << name << "'; choose one of:";
    for (const auto& n : modelNames()) msg << ' ' << n;
    throw InputError(msg.str());
  }
  return spec;
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
}

int64_t parameterCount(const ModelSpec& spec) {
  ModelSpec plain = spec;
  plain.pretrained.clear();  // counting needs no weights
  auto model = makeModel(plain);
  int64_t count = 0;
  for (const auto& p : model->parameters()) count += p.numel();
  return count;
}

}  // namespace geodl
