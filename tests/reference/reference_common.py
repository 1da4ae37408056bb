"""What the reference scripts share: BatchNorm layers given non-trivial statistics and
affine parameters (a freshly built one is the identity), and torchvision's ResNet features
as GeoDL's encoder (and smp's, without the identity) gives them."""
import torch


def vary_batchnorm(model, affine=True):
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
                if affine:
                    m.weight.uniform_(0.5, 1.5)
                    m.bias.uniform_(-0.2, 0.2)


def resnet_features(r, x):
    """The stem's and the four layers' features of torchvision's ResNet r."""
    f = [r.relu(r.bn1(r.conv1(x)))]
    f.append(r.layer1(r.maxpool(f[-1])))
    for layer in (r.layer2, r.layer3, r.layer4):
        f.append(layer(f[-1]))
    return f
