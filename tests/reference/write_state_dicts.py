"""Writes files the way people save PyTorch weights, for GeoDL's reader of torch.save files:
ordered.pt   torch.save(model.state_dict()): an OrderedDict with its _metadata
plain.pt     the same weights as a plain dict (what LibTorch 1.13 reads itself)
checkpoint.pth.tar  geo-deep-learning's checkpoint: the OrderedDict under 'model', the
             optimizer's state, numbers, None, a tuple of bools, a float16 tensor and a
             view sharing a storage at an offset
module.pt    torch.save(module): a Python object, not plain data
prefixed.ckpt  Lightning's form: the OrderedDict under 'state_dict', every key under 'model.'
legacy.pt    torch.save's format before PyTorch 1.6 (_use_new_zipfile_serialization=False):
             the OrderedDict under 'model', a float16 tensor and a view sharing a storage
The model is gdl_models.py's UNetSmall (3 bands, 4 classes).
Usage: write_state_dicts.py OUT_FOLDER"""
import collections
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from gdl_models import UNet, WIDTHS  # noqa: E402

out = sys.argv[1]
torch.manual_seed(11)
model = UNet(4, 3, WIDTHS['unetsmall'])
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
model(torch.randn(2, 3, 32, 32)).mean().backward()
optimizer.step()
torch.save(model.state_dict(), os.path.join(out, 'ordered.pt'))
torch.save(dict(model.state_dict()), os.path.join(out, 'plain.pt'))
base = torch.arange(10, dtype=torch.float64)
torch.save({'epoch': 3, 'arch': 'unetsmall', 'model': model.state_dict(), 'optimizer': optimizer.state_dict(),
            'best_loss': 0.5, 'params': None, 'flags': (True, False), 'big': 2 ** 40, 'negative': -7,
            'half': torch.arange(4, dtype=torch.float16), 'base': base, 'view': base[3:5]},
           os.path.join(out, 'checkpoint.pth.tar'))
torch.save(torch.nn.Linear(2, 2), os.path.join(out, 'module.pt'))
prefixed = collections.OrderedDict(('model.' + k, v) for k, v in model.state_dict().items())
torch.save({'state_dict': prefixed, 'epoch': 1}, os.path.join(out, 'prefixed.ckpt'))
torch.save({'model': model.state_dict(), 'half': torch.arange(4, dtype=torch.float16), 'base': base,
            'view': base[3:5], 'epoch': 2}, os.path.join(out, 'legacy.pt'), _use_new_zipfile_serialization=False)
