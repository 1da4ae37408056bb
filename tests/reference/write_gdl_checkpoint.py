"""Writes a checkpoint shaped like geo-deep-learning's (a dict with the epoch, the
architecture name and the weights under 'model'), with the weights as a plain dict, which
LibTorch's own unpickler reads (write_state_dicts.py writes the OrderedDict forms, which
GeoDL's reader of torch.save files reads).
The model is gdl_models.py's UNetSmall (3 bands, 4 classes)."""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from gdl_models import UNet, WIDTHS  # noqa: E402

torch.manual_seed(11)
model = UNet(4, 3, WIDTHS['unetsmall'])
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
loss = model(torch.randn(2, 3, 32, 32)).mean()
loss.backward()
optimizer.step()
torch.save({"epoch": 3, "arch": "unetsmall", "model": dict(model.state_dict()), "best_loss": 0.5},
           sys.argv[1])
