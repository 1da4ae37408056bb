"""Writes a file in the pretrained-encoder format GeoDL reads: a dict of torchvision's
vgg11().features state_dict (keys 0.weight ... 18.bias), here with random values of the
right shapes, as torch.save writes it. Usage: python3 vgg11_features.py OUT.pt"""
import sys

import torch

SHAPES = [(0, 3, 64), (3, 64, 128), (6, 128, 256), (8, 256, 256), (11, 256, 512),
          (13, 512, 512), (16, 512, 512), (18, 512, 512)]

torch.manual_seed(3)
state = {}
for index, cin, cout in SHAPES:
    state['%d.weight' % index] = torch.randn(cout, cin, 3, 3)
    state['%d.bias' % index] = torch.randn(cout)
torch.save(state, sys.argv[1])
