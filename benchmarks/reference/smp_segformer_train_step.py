"""PyTorch reference for the transformers' rows of bench_memory: segmentation-models-pytorch
0.6's Segformer (the library GeoDL's segformer_b* follow), and for dofa_* the DOFA model of
the tests' reference (TorchGeo's DOFA, geo-deep-learning's neck, smp's UPerNet:
tests/reference/dofa_torchgeo.py), trained as bench_memory's step is (Adam, cross-entropy,
random weights), on Debian's python3-torch (the same LibTorch 1.13 build, the same BLAS).
Also prints the fp32 matrix product's speed, which the BLAS behind libblas.so.3 decides.

Usage: smp_segformer_train_step.py [--models segformer_b0 segformer_b2 dofa_base] [--sample-size 256]
                                   [--batch 4] [--repeats 2] [--threads 2] [--bands 3] [--classes 5]
"""
import argparse
import os
import sys
import time

import torch
import segmentation_models_pytorch as smp


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--models', nargs='+', default=['segformer_b0', 'segformer_b2'])
    p.add_argument('--sample-size', type=int, default=256)
    p.add_argument('--batch', type=int, default=4)
    p.add_argument('--repeats', type=int, default=2)
    p.add_argument('--threads', type=int, default=2)
    p.add_argument('--bands', type=int, default=3)
    p.add_argument('--classes', type=int, default=5)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    x, y = torch.randn(4096, 512), torch.randn(512, 512)
    x @ y
    start = time.time()
    for _ in range(10):
        x @ y
    print('fp32 matrix product (4096x512 by 512x512): %.1f GFLOP/s' % (10 * 2 * 4096 * 512 * 512 / (time.time() - start) / 1e9))
    print('| model | s per sample | samples/s |\n|---|---|---|')
    for name in a.models:
        torch.manual_seed(0)
        if name.startswith('dofa_'):
            sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tests', 'reference'))
            from dofa_torchgeo import DofaSegmentation
            dofa = DofaSegmentation(name, a.classes).train()
            waves = [0.665, 0.56, 0.49, 0.842, 1.61, 2.19][:a.bands]
            model = dofa
            forward = lambda images: dofa(images, waves)
            version = 'torchgeo DOFA, smp UPerNet %s' % smp.__version__
        else:
            model = smp.Segformer('mit_' + name.split('_')[1], encoder_weights=None, in_channels=a.bands,
                                  classes=a.classes).train()
            forward = model
            version = 'smp %s' % smp.__version__
        opt = torch.optim.Adam(model.parameters(), 1e-3)
        images = torch.randn(a.batch, a.bands, a.sample_size, a.sample_size)
        labels = torch.randint(0, a.classes, (a.batch, a.sample_size, a.sample_size))

        def step():
            opt.zero_grad()
            torch.nn.functional.cross_entropy(forward(images), labels).backward()
            opt.step()

        step()  # warm-up
        start = time.time()
        for _ in range(a.repeats):
            step()
        seconds = (time.time() - start) / a.repeats / a.batch
        print('| %s (%s, torch %s) | %.5f | %.1f |' % (name, version, torch.__version__, seconds, 1 / seconds))


if __name__ == '__main__':
    main()
