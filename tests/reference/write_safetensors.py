"""Writes weights as Hugging Face's safetensors does (safetensors.torch.save_file), for
GeoDL's reader of them: gdl_models.py's UNetSmall (3 bands, 4 classes)
model.safetensors          its state dict
plain.pt                   the same as a plain dict of torch.save (the reference)
wrong_shape.safetensors    the first convolution's weight of another shape
missing_key.safetensors    the last bias left out
Usage: write_safetensors.py OUT_FOLDER"""
import os
import sys

import torch
from safetensors.torch import save_file

sys.path.insert(0, os.path.dirname(__file__))
from gdl_models import UNet, WIDTHS  # noqa: E402

out = sys.argv[1]
torch.manual_seed(12)
model = UNet(4, 3, WIDTHS['unetsmall'])
state = {k: v.contiguous() for k, v in model.state_dict().items()}
save_file(state, os.path.join(out, 'model.safetensors'), metadata={'format': 'pt'})
torch.save(dict(state), os.path.join(out, 'plain.pt'))
first = next(iter(state))
wrong = dict(state)
wrong[first] = torch.zeros(wrong[first].shape[0], 3, 1, 1)
save_file(wrong, os.path.join(out, 'wrong_shape.safetensors'))
missing = dict(state)
last_bias = [k for k in state if k.endswith('.bias')][-1]
del missing[last_bias]
save_file(missing, os.path.join(out, 'missing_key.safetensors'))
