#include "core/models.h"

#include "core/ternausnet.h"
#include "core/unet.h"

namespace geodl {

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
      if (!spec.pretrained.empty()) model->loadPretrainedEncoder(spec.pretrained);
      return model;
    }
  }
  throw std::logic_error("unhandled architecture");
}

}  // namespace geodl
