"""The references for GeoDL's UNet++, DeepLabs and ResNet UNets (random weights: nothing is
downloaded): torchvision's deeplabv3_resnet50 itself, and segmentation-models-pytorch's Unet
and UnetPlusPlus (resnet34) and DeepLabV3Plus (resnet50, output stride 16, rates 6/12/18, plain
convolutions) written out here from smp's definitions on torchvision's ResNets (smp is not
packaged by Debian). Writes the state dict, an input and the logits in eval mode.

Usage: segmentation_models.py deeplabv3_resnet50|resnet34_unet|resnet34_unetplusplus|deeplabv3plus_resnet50
       BANDS CLASSES HEIGHT WIDTH OUT.pt
"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torchvision.models.segmentation.deeplabv3 import ASPP

from reference_common import resnet_features, vary_batchnorm


def conv_bn_relu(cin, cout, k):
    return nn.Sequential(nn.Conv2d(cin, cout, k, padding=k // 2, bias=False), nn.BatchNorm2d(cout), nn.ReLU(True))


class DecoderBlock(nn.Module):  # smp.decoders.unet.decoder.DecoderBlock
    def __init__(self, cin, skip, cout):
        super().__init__()
        self.conv1 = conv_bn_relu(cin + skip, cout, 3)
        self.conv2 = conv_bn_relu(cout, cout, 3)

    def forward(self, x, skip=None):
        x = F.interpolate(x, scale_factor=2, mode="nearest")
        if skip is not None:
            x = torch.cat([x, skip], dim=1)
        return self.conv2(self.conv1(x))


class Unet(nn.Module):  # smp.Unet (smp.decoders.unet), encoder resnet18/34/50
    def __init__(self, bands, classes, encoder="resnet34"):
        super().__init__()
        self.encoder = getattr(torchvision.models, encoder)(weights=None)
        del self.encoder.fc
        if bands != 3:
            self.encoder.conv1 = nn.Conv2d(bands, 64, 7, 2, 3, bias=False)
        expansion = 4 if encoder == "resnet50" else 1
        encoder_channels = [512 * expansion, 256 * expansion, 128 * expansion, 64 * expansion, 64]
        decoder_channels = [256, 128, 64, 32, 16]
        in_channels = [encoder_channels[0]] + decoder_channels[:-1]
        skip_channels = encoder_channels[1:] + [0]
        self.decoder = nn.Module()
        self.decoder.blocks = nn.ModuleList(
            DecoderBlock(i, s, o) for i, s, o in zip(in_channels, skip_channels, decoder_channels))
        self.segmentation_head = nn.Sequential(nn.Conv2d(16, classes, 3, padding=1))

    def forward(self, x):
        features = resnet_features(self.encoder, x)[::-1]
        x, skips = features[0], features[1:]
        for i, block in enumerate(self.decoder.blocks):
            x = block(x, skips[i] if i < len(skips) else None)
        return self.segmentation_head(x)


class UnetPlusPlus(nn.Module):  # smp.decoders.unetplusplus, encoder resnet34
    def __init__(self, bands, classes):
        super().__init__()
        self.encoder = torchvision.models.resnet34(weights=None)
        del self.encoder.fc
        if bands != 3:
            self.encoder.conv1 = nn.Conv2d(bands, 64, 7, 2, 3, bias=False)
        encoder_channels = [512, 256, 128, 64, 64]
        decoder_channels = [256, 128, 64, 32, 16]
        self.in_channels = [encoder_channels[0]] + decoder_channels[:-1]
        self.skip_channels = encoder_channels[1:] + [0]
        blocks = {}
        for layer_idx in range(len(self.in_channels) - 1):
            for depth_idx in range(layer_idx + 1):
                if depth_idx == 0:
                    in_ch = self.in_channels[layer_idx]
                    skip_ch = self.skip_channels[layer_idx] * (layer_idx + 1)
                    out_ch = decoder_channels[layer_idx]
                else:
                    out_ch = self.skip_channels[layer_idx]
                    skip_ch = self.skip_channels[layer_idx] * (layer_idx + 1 - depth_idx)
                    in_ch = self.skip_channels[layer_idx - 1]
                blocks[f"x_{depth_idx}_{layer_idx}"] = DecoderBlock(in_ch, skip_ch, out_ch)
        blocks[f"x_0_{len(self.in_channels) - 1}"] = DecoderBlock(self.in_channels[-1], 0, decoder_channels[-1])
        self.decoder = nn.Module()
        self.decoder.blocks = nn.ModuleDict(blocks)
        self.depth = len(self.in_channels) - 1
        self.segmentation_head = nn.Sequential(nn.Conv2d(16, classes, 3, padding=1))

    def forward(self, x):
        features = resnet_features(self.encoder, x)[::-1]
        blocks = self.decoder.blocks
        dense_x = {}
        for layer_idx in range(len(self.in_channels) - 1):
            for depth_idx in range(self.depth - layer_idx):
                if layer_idx == 0:
                    dense_x[f"x_{depth_idx}_{depth_idx}"] = blocks[f"x_{depth_idx}_{depth_idx}"](
                        features[depth_idx], features[depth_idx + 1])
                else:
                    dense_l_i = depth_idx + layer_idx
                    cat = [dense_x[f"x_{idx}_{dense_l_i}"] for idx in range(depth_idx + 1, dense_l_i + 1)]
                    cat = torch.cat(cat + [features[dense_l_i + 1]], dim=1)
                    dense_x[f"x_{depth_idx}_{dense_l_i}"] = blocks[f"x_{depth_idx}_{dense_l_i}"](
                        dense_x[f"x_{depth_idx}_{dense_l_i - 1}"], cat)
        last = blocks[f"x_0_{self.depth}"](dense_x[f"x_0_{self.depth - 1}"])
        return self.segmentation_head(last)


class DeepLabV3Plus(nn.Module):  # smp.decoders.deeplabv3, encoder resnet50, output stride 16
    def __init__(self, bands, classes):
        super().__init__()
        self.encoder = torchvision.models.resnet50(weights=None, replace_stride_with_dilation=[False, False, True])
        del self.encoder.fc
        if bands != 3:
            self.encoder.conv1 = nn.Conv2d(bands, 64, 7, 2, 3, bias=False)
        self.decoder = nn.Module()
        self.decoder.aspp = nn.Sequential(ASPP(2048, [6, 12, 18], 256), nn.Conv2d(256, 256, 3, padding=1, bias=False),
                                          nn.BatchNorm2d(256), nn.ReLU())
        self.decoder.block1 = conv_bn_relu(256, 48, 1)
        self.decoder.block2 = conv_bn_relu(304, 256, 3)
        self.segmentation_head = nn.Sequential(nn.Conv2d(256, classes, 1))

    def forward(self, x):
        f = resnet_features(self.encoder, x)
        aspp = F.interpolate(self.decoder.aspp(f[-1]), scale_factor=4, mode="bilinear", align_corners=True)
        fused = self.decoder.block2(torch.cat([aspp, self.decoder.block1(f[1])], dim=1))
        return F.interpolate(self.segmentation_head(fused), scale_factor=4, mode="bilinear", align_corners=True)


def main():
    name, bands, classes, height, width, out = sys.argv[1:7]
    bands, classes = int(bands), int(classes)
    torch.manual_seed(13)
    if name == "deeplabv3_resnet50":
        model = torchvision.models.segmentation.deeplabv3_resnet50(weights=None, weights_backbone=None,
                                                                   num_classes=classes, aux_loss=False)
        if bands != 3:
            model.backbone.conv1 = nn.Conv2d(bands, 64, 7, 2, 3, bias=False)
        forward = lambda x: model(x)["out"]
    elif name == "resnet34_unetplusplus":
        model = UnetPlusPlus(bands, classes)
        forward = model
    elif name == "resnet34_unet":
        model = Unet(bands, classes, "resnet34")
        forward = model
    else:
        model = DeepLabV3Plus(bands, classes)
        forward = model
    vary_batchnorm(model)
    model.eval()
    x = torch.randn(2, bands, int(height), int(width))
    with torch.no_grad():
        logits = forward(x)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    torch.save({"state": state, "input": x, "logits": logits,
                "parameters": torch.tensor(sum(p.numel() for p in model.parameters()))}, out)


if __name__ == "__main__":
    main()
