"""torchvision's ResNet (random weights: nothing is downloaded) for GeoDL's encoder to be
compared with: its state dict without fc, an input, and the features after the stem and
each layer, in eval mode and in training mode.

Usage: torchvision_resnet.py DEPTH BANDS HEIGHT WIDTH OUT.pt
"""
import sys

import torch
import torchvision

depth, bands, height, width, out = sys.argv[1:6]
torch.manual_seed(11)
model = getattr(torchvision.models, "resnet" + depth)(weights=None)
if int(bands) != 3:
    model.conv1 = torch.nn.Conv2d(int(bands), 64, 7, 2, 3, bias=False)
# Non-trivial BatchNorm statistics and affine parameters.
with torch.no_grad():
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 1.5)
            m.weight.uniform_(0.5, 1.5)
            m.bias.uniform_(-0.2, 0.2)


def features(x):
    f = [model.relu(model.bn1(model.conv1(x)))]
    f.append(model.layer1(model.maxpool(f[-1])))
    for layer in (model.layer2, model.layer3, model.layer4):
        f.append(layer(f[-1]))
    return f


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
