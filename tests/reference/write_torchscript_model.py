"""Writes a TorchScript segmentation model the way one is exported from PyTorch
(torch.jit.trace of geo-deep-learning's UNetSmall, 3 bands, 2 classes, seeded weights)
and its sidecar (JSON) for GeoDL: bands, normalization, classes, sample size.
Usage: write_torchscript_model.py MODEL.pt"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from gdl_models import UNet, WIDTHS  # noqa: E402

torch.manual_seed(21)
model = UNet(2, 3, WIDTHS['unetsmall']).eval()
scripted = torch.jit.trace(model, torch.randn(1, 3, 32, 32))
scripted.save(sys.argv[1])
sidecar = os.path.splitext(sys.argv[1])[0] + '.json'
with open(sidecar, 'w') as f:
    json.dump({'bands': 3, 'band_mean': [100.0, 101.0, 102.0], 'band_std': [50.0, 50.0, 50.0],
               'classes': [{'id': 0, 'name': 'background'},
                           {'id': 1, 'name': 'building', 'colour': '#ff0000'}],
               'sample_size': 32, 'data_type': 'Byte'}, f)
