"""Writes a torchvision model's randomly initialised state dict as a plain dict with
torch.save, as a user writes a pretrained encoder file (README, "Pretrained encoders");
nothing is downloaded.

Usage: write_torchvision_encoder.py resnet18|resnet34|resnet50|deeplabv3_resnet50 OUT.pt
"""
import sys

import torch
import torchvision

from reference_common import vary_batchnorm

name, out = sys.argv[1:3]
torch.manual_seed(21)
if name == "deeplabv3_resnet50":
    model = torchvision.models.segmentation.deeplabv3_resnet50(weights=None, weights_backbone=None)
else:
    model = getattr(torchvision.models, name)(weights=None)
vary_batchnorm(model, affine=False)
torch.save(dict(model.state_dict()), out)
