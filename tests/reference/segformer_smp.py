"""SegFormer references from segmentation-models-pytorch itself (PyPI; install-deps installs
it for the tests only).

  segformer_smp.py counts OUT                     parameter counts of B0-B5 (3 bands, 1 class)
  segformer_smp.py NAME BANDS CLASSES H W OUT     a random smp Segformer, its input and logits;
      beside OUT: NAME_encoder.safetensors (smp's encoder, keys encoder.*) and NAME_mit.pth
      (NVIDIA's layout: the encoder's names without prefix, a classification head, saved by
      torch.save as the OrderedDict of state_dict())
"""
import os
import sys

import torch
import segmentation_models_pytorch as smp
from safetensors.torch import save_file

from reference_common import vary_batchnorm


def segformer(name, bands, classes):
    variant = name.rsplit("_", 1)[1]  # b0 ... b5
    return smp.Segformer(f"mit_{variant}", encoder_weights=None, in_channels=bands, classes=classes)


def main():
    if sys.argv[1] == "counts":
        # Counting needs no initialisation (most of the time of building B5).
        import segmentation_models_pytorch.encoders.mix_transformer as mit
        mit.trunc_normal_ = lambda tensor, **kwargs: tensor
        counts = [sum(p.numel() for p in segformer(f"segformer_b{b}", 3, 1).parameters()) for b in range(6)]
        # Two items: LibTorch 1.13's unpickler lacks the opcode of a one-item dict (SETITEM).
        torch.save({"counts": torch.tensor(counts), "variants": torch.arange(6)}, sys.argv[2])
        return
    name, bands, classes, height, width, out = sys.argv[1:7]
    bands, classes = int(bands), int(classes)
    torch.manual_seed(17)
    model = segformer(name, bands, classes)
    vary_batchnorm(model)
    with torch.no_grad():  # LayerNorms other than the identity
        for m in model.modules():
            if isinstance(m, torch.nn.LayerNorm):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    model.eval()
    x = torch.randn(2, bands, int(height), int(width))
    with torch.no_grad():
        logits = model(x)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    torch.save({"state": state, "input": x, "logits": logits,
                "parameters": torch.tensor(sum(p.numel() for p in model.parameters()))}, out)
    folder = os.path.dirname(out)
    encoder = {k: v.contiguous() for k, v in state.items() if k.startswith("encoder.")}
    save_file(encoder, os.path.join(folder, name + "_encoder.safetensors"))
    mit = model.encoder.state_dict()
    mit["head.weight"] = torch.randn(1000, mit["norm4.weight"].numel())
    mit["head.bias"] = torch.zeros(1000)
    torch.save(mit, os.path.join(folder, name + "_mit.pth"))


if __name__ == "__main__":
    main()
