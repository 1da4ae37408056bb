"""torchvision's ResNet (random weights: nothing is downloaded) for GeoDL's encoder to be
compared with: its state dict without fc, an input, and the features after the stem and
each layer, in eval mode and in training mode.

Usage: torchvision_resnet.py DEPTH BANDS HEIGHT WIDTH OUT.pt
"""
import sys

import torch
import torchvision

from reference_common import resnet_features, vary_batchnorm

depth, bands, height, width, out = sys.argv[1:6]
torch.manual_seed(11)
model = getattr(torchvision.models, "resnet" + depth)(weights=None)
if int(bands) != 3:
    model.conv1 = torch.nn.Conv2d(int(bands), 64, 7, 2, 3, bias=False)
vary_batchnorm(model)


def features(x):
    return resnet_features(model, x)


x = torch.randn(2, int(bands), int(height), int(width))
state = {k: v.clone() for k, v in model.state_dict().items() if not k.startswith("fc.")}
model.eval()
with torch.no_grad():
    eval_features = features(x)
model.train()
train_last = features(x)[-1].detach()
result = {"state": state, "input": x, "train_layer4": train_last,
          "parameters": torch.tensor(sum(p.numel() for n, p in model.named_parameters() if not n.startswith("fc.")))}
for i, f in enumerate(eval_features):
    result["eval_%d" % i] = f
torch.save(result, out)
