"""PyTorch reference for bench_memory: geo-deep-learning's UNets trained the way
geo-deep-learning does (Adam, cross-entropy), plain and with torch.utils.checkpoint around
each encoder/decoder block, with Debian's python3-torch (the same LibTorch 1.13 build).

Prints, per model and mode: step seconds per sample at a fixed batch, and the growth of
peak resident memory (ru_maxrss) per sample between two batch sizes, each measured in a
fresh process so that earlier peaks do not hide later ones.

Usage: pytorch_train_step.py [--models unetsmall unet] [--sample-size 256] [--batch 4]
                             [--repeats 2] [--threads 2]
"""
import argparse
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'tests', 'reference'))


def run_one(args):
    import torch
    import torch.nn.functional as F
    from torch.utils.checkpoint import checkpoint
    import gdl_models

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = gdl_models.UNet(args.classes, args.bands, gdl_models.WIDTHS[args.models[0]])
    if args.checkpoint:
        # torch.utils.checkpoint around every encoder and decoder block. Non-reentrant:
        # the reentrant variant gives no gradient to blocks whose inputs need none (the
        # first block, then everything after it), which would look fast and small.
        for name, module in list(model.named_children()):
            if isinstance(module, (gdl_models.EncodingBlock, gdl_models.DecodingBlock)):
                forward = module.forward
                module.forward = (lambda f: lambda *xs: checkpoint(f, *xs, use_reentrant=False))(forward)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    s = args.sample_size

    def step(batch):
        x = torch.randn(batch, args.bands, s, s)
        y = torch.randint(0, args.classes, (batch, s, s))
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()

    step(args.batch)  # warm-up
    start = time.perf_counter()
    for _ in range(args.repeats):
        step(args.batch)
    seconds = (time.perf_counter() - start) / args.repeats
    print('%f %d' % (seconds / args.batch, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--models', nargs='+', default=['unetsmall', 'unet'])
    p.add_argument('--sample-size', type=int, default=256)
    p.add_argument('--bands', type=int, default=3)
    p.add_argument('--classes', type=int, default=5)
    p.add_argument('--batch', type=int, default=4)
    p.add_argument('--repeats', type=int, default=2)
    p.add_argument('--threads', type=int, default=2)
    p.add_argument('--checkpoint', action='store_true')
    p.add_argument('--one', action='store_true', help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.one:
        run_one(args)
        return

    def measure(model, checkpointed, batch):
        cmd = [sys.executable, __file__, '--one', '--models', model,
               '--sample-size', str(args.sample_size), '--bands', str(args.bands),
               '--classes', str(args.classes), '--batch', str(batch),
               '--repeats', str(args.repeats), '--threads', str(args.threads)]
        if checkpointed:
            cmd.append('--checkpoint')
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.split()
        return float(out[0]), int(out[1]) / 1024.0  # s per sample, peak RSS MiB

    print('PyTorch %s reference, %d threads, %dx%d, batch %d' % (
        __import__('torch').__version__, args.threads, args.sample_size, args.sample_size,
        args.batch))
    print('| model | torch.utils.checkpoint | step s per sample | peak RSS MiB per sample |')
    print('|---|---|---|---|')
    for model in args.models:
        for checkpointed in (False, True):
            seconds, rss_small = measure(model, checkpointed, 2)
            seconds, rss = measure(model, checkpointed, args.batch)
            per_sample = (rss - rss_small) / (args.batch - 2)
            print('| %s | %s | %.3f | %.1f |' % (model, 'on' if checkpointed else 'off',
                                                 seconds, per_sample))
            sys.stdout.flush()


if __name__ == '__main__':
    main()
