"""PyTorch reference of the GPU check: training steps of geo-deep-learning's UNets
(gdl_models.py) and smp's resnet34 Unet (written out on torchvision's ResNet in
tests/reference/segmentation_models.py) on one GPU, the way a PyTorch user trains them:
Adam, cross-entropy, fp32 or bf16 autocast, cuDNN's autotuner on, with and without
channels last. A random batch on the GPU (the same for every step): the compute alone, as
bench_memory --no-confirm measures GeoDL's.

Prints one line per model, precision and layout: samples per second (the mean of --steps
steps after --warmup), and the peak GPU memory. Its best configuration is what GeoDL is held
against.

Usage: pytorch_gpu_train_step.py [--models unetsmall unet resnet34_unet] [--batch 64]
       [--sample-size 256] [--steps 20] [--warmup 5] [--precisions fp32 bf16]
"""
import argparse
import os
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'tests', 'reference'))
import gdl_models  # noqa: E402
import segmentation_models  # noqa: E402


def make(name, bands, classes):
    if name == 'resnet34_unet':
        return segmentation_models.Unet(bands, classes, 'resnet34')
    return gdl_models.UNet(classes, bands, gdl_models.WIDTHS[name])


def measure(args, name, precision, channels_last):
    torch.manual_seed(0)
    model = make(name, args.bands, args.classes).cuda()
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    model = model.to(memory_format=fmt)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    s = args.sample_size
    x = torch.randn(args.batch, args.bands, s, s, device='cuda').contiguous(memory_format=fmt)
    y = torch.randint(0, args.classes, (args.batch, s, s), device='cuda')

    def step():
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast('cuda', dtype=torch.bfloat16, enabled=precision == 'bf16'):
            logits = model(x)
        loss = F.cross_entropy(logits.float(), y)
        loss.backward()
        optimizer.step()

    torch.cuda.reset_peak_memory_stats()
    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(args.steps):
        step()
    torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    peak = torch.cuda.max_memory_allocated() / 2**20
    params = sum(p.numel() for p in model.parameters())
    del model, optimizer, x, y
    torch.cuda.empty_cache()
    return args.batch * args.steps / seconds, peak, params


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--models', nargs='+', default=['unetsmall', 'unet', 'resnet34_unet'])
    p.add_argument('--precisions', nargs='+', default=['fp32', 'bf16'])
    p.add_argument('--sample-size', type=int, default=256)
    p.add_argument('--bands', type=int, default=3)
    p.add_argument('--classes', type=int, default=5)
    p.add_argument('--batch', type=int, default=64)
    p.add_argument('--steps', type=int, default=20)
    p.add_argument('--warmup', type=int, default=5)
    args = p.parse_args()
    torch.backends.cudnn.benchmark = True
    print('PyTorch %s reference on %s, %dx%d, batch %d, %d steps after %d' % (
        torch.__version__, torch.cuda.get_device_name(0), args.sample_size, args.sample_size, args.batch,
        args.steps, args.warmup))
    print('| model | parameters | precision | channels last | samples/s | peak GPU MiB |')
    print('|---|---|---|---|---|---|')
    for name in args.models:
        for precision in args.precisions:
            best = 0
            for channels_last in (False, True):
                rate, peak, params = measure(args, name, precision, channels_last)
                best = max(best, rate)
                print('| %s | %d | %s | %s | %.1f | %.0f |' % (name, params, precision,
                                                            'yes' if channels_last else 'no', rate, peak))
                sys.stdout.flush()
            print('best %s %s %.1f' % (name, precision, best))


if __name__ == '__main__':
    main()
