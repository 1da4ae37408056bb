"""DOFA references: TorchGeo 0.7.1's DOFA encoder itself (PyPI; install-deps installs it for
the tests only), timm's position-embedding resampling, and segmentation-models-pytorch 0.6's
UPerNet decoder and segmentation head, joined by geo-deep-learning's multi-level neck.

  dofa_torchgeo.py counts OUT
      parameter counts of dofa_base and dofa_large (3 bands, 1 class)
  dofa_torchgeo.py NAME CLASSES H1xW1,H2xW2 WAVELENGTHS OUT
      a random DOFA segmentation model, and for each window size an input and its logits;
      WAVELENGTHS: the bands' (micrometres, comma-separated). Beside OUT: NAME_torchgeo.pth,
      the encoder as TorchGeo's DOFA holds it (no prefix, with its fc_norm and head), saved by
      torch.save as the OrderedDict of state_dict().

The segmentation model (GeoDL's dofa_base, dofa_large):
  encoder  TorchGeo's DOFA: the wavelength-conditioned patch embedding (patch 16), the class
           token, the position embedding of the 224 x 224 pretraining grid resampled to the
           window's (timm's resample_abs_pos_embed: bicubic, antialiased), the ViT blocks;
           the features of blocks 3, 5, 7, 11 (base) or 7, 11, 15, 23 (large), tokens as
           images of a 16th of the window.
  neck     geo-deep-learning's MultiLevelNeck: per level a conv 1x1 (bias), BatchNorm, ReLU,
           resized bilinearly by 4, 2, 1 and 0.5, then a conv 3x3 (bias), BatchNorm, ReLU.
  decoder  smp's UPerNetDecoder (256 channels) on the four levels (a quarter ... a 32nd).
  head     smp's SegmentationHead (conv 1x1), resized bilinearly (align_corners false) to
           the window, as geo-deep-learning does.
"""
import importlib.util
import os
import sys

import torch
import torch.nn.functional as F
from segmentation_models_pytorch.base import SegmentationHead
from segmentation_models_pytorch.decoders.upernet.decoder import UPerNetDecoder
from timm.layers import resample_abs_pos_embed

from reference_common import vary_batchnorm


def torchgeo_dofa_module():
    # torchgeo.models' __init__ imports every model TorchGeo has (and their dependencies):
    # the DOFA module alone is read from the installed package.
    spec = importlib.util.find_spec("torchgeo")
    path = os.path.join(os.path.dirname(spec.origin), "models", "dofa.py")
    module_spec = importlib.util.spec_from_file_location("torchgeo_dofa", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


SHAPES = {"dofa_base": dict(embed_dim=768, depth=12, num_heads=12, layers=(3, 5, 7, 11)),
          "dofa_large": dict(embed_dim=1024, depth=24, num_heads=16, layers=(7, 11, 15, 23))}


class ConvModule(torch.nn.Module):
    def __init__(self, cin, cout, kernel, padding=0):
        super().__init__()
        self.conv = torch.nn.Conv2d(cin, cout, kernel, padding=padding)
        self.norm = torch.nn.BatchNorm2d(cout)

    def forward(self, x):
        return F.relu(self.norm(self.conv(x)))


class MultiLevelNeck(torch.nn.Module):
    def __init__(self, dim, scales=(4, 2, 1, 0.5)):
        super().__init__()
        self.scales = scales
        self.lateral_convs = torch.nn.ModuleList([ConvModule(dim, dim, 1) for _ in scales])
        self.convs = torch.nn.ModuleList([ConvModule(dim, dim, 3, 1) for _ in scales])

    def forward(self, features):
        out = []
        for i, scale in enumerate(self.scales):
            x = self.lateral_convs[i](features[i])
            x = F.interpolate(x, scale_factor=scale, mode="bilinear")
            out.append(self.convs[i](x))
        return out


class DofaSegmentation(torch.nn.Module):
    def __init__(self, name, classes):
        super().__init__()
        shape = SHAPES[name]
        tg = torchgeo_dofa_module()
        self.layers = shape["layers"]
        self.encoder = tg.DOFA(img_size=224, patch_size=16, embed_dim=shape["embed_dim"], depth=shape["depth"],
                               num_heads=shape["num_heads"], num_classes=0)
        dim = shape["embed_dim"]
        self.neck = MultiLevelNeck(dim)
        self.decoder = UPerNetDecoder(encoder_channels=[3, 0] + [dim] * 4, encoder_depth=5, decoder_channels=256)
        self.segmentation_head = SegmentationHead(256, classes, kernel_size=1)

    def features(self, x, wavelengths):
        e = self.encoder
        tokens, _ = e.patch_embed(x, torch.tensor(wavelengths).float())
        h, w = x.shape[2] // 16, x.shape[3] // 16
        pos = resample_abs_pos_embed(e.pos_embed, new_size=(h, w), old_size=(14, 14), num_prefix_tokens=1)
        tokens = tokens + pos[:, 1:, :]
        cls = (e.cls_token + pos[:, :1, :]).expand(x.shape[0], -1, -1)
        t = torch.cat((cls, tokens), dim=1)
        out = []
        for i, block in enumerate(e.blocks):
            t = block(t)
            if i in self.layers:
                out.append(t[:, 1:].reshape(x.shape[0], h, w, -1).permute(0, 3, 1, 2).contiguous())
        return out

    def forward(self, x, wavelengths):
        levels = self.neck(self.features(x, wavelengths))
        fused = self.decoder([None, None] + levels)
        return F.interpolate(self.segmentation_head(fused), size=x.shape[2:], mode="bilinear", align_corners=False)


def parameters(model):
    # TorchGeo's DOFA has a classification norm (fc_norm) the segmentation model leaves out.
    # Its position embedding is fixed (requires_grad false): GeoDL holds it as a buffer.
    return sum(p.numel() for n, p in model.named_parameters()
               if p.requires_grad and not n.startswith("encoder.fc_norm."))


def main():
    if sys.argv[1] == "counts":
        counts = []
        for name in ("dofa_base", "dofa_large"):
            counts.append(parameters(DofaSegmentation(name, 1)))
        # Two items: LibTorch 1.13's unpickler lacks the opcode of a one-item dict (SETITEM).
        torch.save({"counts": torch.tensor(counts), "models": torch.arange(2)}, sys.argv[2])
        return
    name, classes, sizes, wavelengths, out = sys.argv[1:6]
    wavelengths = [float(w) for w in wavelengths.split(",")]
    torch.manual_seed(23)
    model = DofaSegmentation(name, int(classes))
    vary_batchnorm(model)
    with torch.no_grad():  # TorchGeo's are zeros (its weights files fill them), and identities
        model.encoder.pos_embed.normal_(0, 0.2)
        model.encoder.cls_token.normal_(0, 0.2)
        for m in model.modules():
            if isinstance(m, torch.nn.LayerNorm):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    model.eval()
    result = {"parameters": torch.tensor(parameters(model))}
    for i, size in enumerate(sizes.split(",")):
        height, width = (int(s) for s in size.split("x"))
        x = torch.randn(2, len(wavelengths), height, width)
        with torch.no_grad():
            result[f"input{i}"] = x
            result[f"logits{i}"] = model(x, wavelengths)
    state = {k: v.clone() for k, v in model.state_dict().items() if not k.startswith("encoder.fc_norm.")}
    result["state"] = state
    torch.save(result, out)
    torch.save(model.encoder.state_dict(), os.path.join(os.path.dirname(out), name + "_torchgeo.pth"))


if __name__ == "__main__":
    main()
