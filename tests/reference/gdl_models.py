"""geo-deep-learning's UNet and UNetSmall (models/unet_pytorch.py), written out again for
GeoDL's fidelity test, with a small driver that saves weights, an input and the outputs.

Usage: python3 gdl_models.py MODEL BANDS CLASSES HEIGHT WIDTH OUT.pt
"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

from reference_common import vary_batchnorm


class EncodingBlock(nn.Module):
    def __init__(self, in_size, out_size, padding=0, kernel_size=3, dropout=False, prob=0.0,
                 batch_norm=True):
        super().__init__()
        layers = []
        for i in range(2):
            layers += [nn.ReflectionPad2d(padding=(kernel_size - 1) // 2),
                       nn.Conv2d(in_size if i == 0 else out_size, out_size,
                                 kernel_size=kernel_size, padding=padding),
                       nn.PReLU()]
            if batch_norm:
                layers.append(nn.BatchNorm2d(out_size))
            if dropout:
                layers.append(nn.Dropout(p=prob))
        self.EncodingBlock = nn.Sequential(*layers)

    def forward(self, inputs):
        return self.EncodingBlock(inputs)


class DecodingBlock(nn.Module):
    def __init__(self, in_size, out_size):
        super().__init__()
        self.up = nn.Sequential(nn.Upsample(mode='bilinear', scale_factor=2, align_corners=False),
                                nn.Conv2d(in_size, out_size, kernel_size=1))
        self.conv = EncodingBlock(in_size, out_size, batch_norm=False)

    def forward(self, input1, input2):
        output2 = self.up(input2)
        output1 = F.interpolate(input1, output2.size()[2:], mode='bilinear', align_corners=False)
        return self.conv(torch.cat([output1, output2], 1))


class UNet(nn.Module):
    def __init__(self, num_classes, number_of_bands, widths):
        super().__init__()
        self.levels = len(widths) - 1
        in_size = number_of_bands
        for i in range(self.levels):
            setattr(self, 'conv%d' % (i + 1), EncodingBlock(in_size, widths[i]))
            in_size = widths[i]
        self.center = EncodingBlock(in_size, widths[-1])
        for i in reversed(range(self.levels)):
            setattr(self, 'decode%d' % (i + 1), DecodingBlock(widths[i + 1], widths[i]))
        self.final = nn.Conv2d(widths[0], num_classes, kernel_size=1)

    def forward(self, inputs):
        skips = []
        h = inputs
        for i in range(self.levels):
            h = getattr(self, 'conv%d' % (i + 1))(F.max_pool2d(h, 2) if i > 0 else h)
            skips.append(h)
        h = self.center(F.max_pool2d(h, 2))
        for i in reversed(range(self.levels)):
            h = getattr(self, 'decode%d' % (i + 1))(skips[i], h)
        final = self.final(h)
        return F.interpolate(final, inputs.size()[2:], mode='bilinear', align_corners=False)


WIDTHS = {'unet': [64, 128, 256, 512, 1024], 'unetsmall': [32, 64, 128, 256]}


def main():
    name, bands, classes, height, width, out = sys.argv[1:7]
    torch.manual_seed(7)
    model = UNet(int(classes), int(bands), WIDTHS[name])
    # Non-trivial BatchNorm statistics and PReLU slopes.
    vary_batchnorm(model)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.PReLU):
                m.weight.uniform_(0.1, 0.4)
    x = torch.randn(2, int(bands), int(height), int(width))
    state = {k: v.clone() for k, v in model.state_dict().items()}
    model.eval()
    with torch.no_grad():
        eval_out = model(x)
    model.train()
    train_out = model(x)
    torch.save({'state': state, 'input': x, 'eval_output': eval_out,
                'train_output': train_out.detach(),
                'parameters': torch.tensor(sum(p.numel() for p in model.parameters()))}, out)


if __name__ == '__main__':
    main()
