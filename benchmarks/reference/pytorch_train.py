"""PyTorch reference for the training benchmark: geo-deep-learning's way of training, with
Debian's python3-torch (the same LibTorch 1.13 build GeoDL links).

A Dataset that opens the HDF5 store with h5py and reads one sample per __getitem__, the
same normalization (the training store's band_mean/band_std) and augmentation as GeoDL
(random rotation, bilinear for the image and nearest for the labels, uncovered corners set
to the ignore index; horizontal and vertical flips), a DataLoader with worker processes,
gdl_models.py's UNetSmall, Adam, StepLR, cross-entropy with ignore_index 255; validation
each epoch with a confusion matrix (per-class IoU).

Prints one JSON line per epoch: losses, IoUs, samples per second, and where the training
time went (data wait, forward, backward, optimizer).

Usage: pytorch_train.py TRN_STORE VAL_STORE [--epochs 10] [--batch 8] [--threads 2]
       [--workers 2] [--lr 1e-4] [--step-size 4] [--gamma 0.9] [--seed 1]
       [--rotate-limit 45] [--rotate-prob 0.5] [--hflip-prob 0.5] [--vflip-prob 0]
       [--model unetsmall] [--no-flush-denormal] [--bf16] [--channels-last]
"""
import argparse
import json
import math
import os
import sys
import time

import h5py
import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'tests', 'reference'))
import gdl_models  # noqa: E402


def transform(image, labels, angle_degrees, hflip, vflip, ignore):
    """image: S x S x B normalized float32, labels: S x S. GeoDL's transformSample."""
    size = labels.shape[0]
    ys, xs = np.meshgrid(np.arange(size), np.arange(size), indexing='ij')
    fx = size - 1 - xs if hflip else xs
    fy = size - 1 - ys if vflip else ys
    if angle_degrees == 0:
        return image[fy, fx], labels[fy, fx].astype(np.int64)
    a = math.radians(angle_degrees)
    c = (size - 1) / 2.0
    dx, dy = fx - c, fy - c
    sx = math.cos(a) * dx + math.sin(a) * dy + c
    sy = -math.sin(a) * dx + math.cos(a) * dy + c
    nx, ny = np.rint(sx).astype(np.int64), np.rint(sy).astype(np.int64)
    inside = (nx >= 0) & (ny >= 0) & (nx < size) & (ny < size)
    out_labels = np.full((size, size), ignore, np.int64)
    out_labels[inside] = labels[ny[inside], nx[inside]]
    x0, y0 = np.floor(sx).astype(np.int64), np.floor(sy).astype(np.int64)
    wx, wy = (sx - x0)[..., None], (sy - y0)[..., None]
    out = np.zeros_like(image)
    for kx, ky, w in ((0, 0, (1 - wx) * (1 - wy)), (1, 0, wx * (1 - wy)),
                      (0, 1, (1 - wx) * wy), (1, 1, wx * wy)):
        xi, yi = x0 + kx, y0 + ky
        ok = (xi >= 0) & (yi >= 0) & (xi < size) & (yi < size)
        v = np.zeros_like(image)
        v[ok] = image[yi[ok], xi[ok]]
        out += (w * v).astype(np.float32)
    return out, out_labels


class SampleStore(torch.utils.data.Dataset):
    """geo-deep-learning's SegmentationDataset: one h5py read per sample."""

    def __init__(self, path, mean, std, augment=None, ignore=255, seed=0):
        self.path, self.mean, self.std = path, mean, std
        self.augment, self.ignore, self.seed = augment, ignore, seed
        self.file = None
        with h5py.File(path, 'r') as f:
            self.length = f['sat_img'].shape[0]
        self.epoch = 0

    def __len__(self):
        return self.length

    def __getitem__(self, index):
        if self.file is None:  # one handle per worker process
            self.file = h5py.File(self.path, 'r')
        image = (self.file['sat_img'][index].astype(np.float32) - self.mean) / self.std
        labels = self.file['map_img'][index]
        angle, hflip, vflip = 0.0, False, False
        if self.augment:
            rng = np.random.default_rng((self.seed, self.epoch, index))
            u_rotate, u_angle, u_h, u_v = rng.random(4)
            a = self.augment
            if a['rotate_limit'] > 0 and u_rotate < a['rotate_prob']:
                angle = (2 * u_angle - 1) * a['rotate_limit']
            hflip, vflip = u_h < a['hflip_prob'], u_v < a['vflip_prob']
        image, labels = transform(image.astype(np.float32), labels, angle, hflip, vflip, self.ignore)
        return (torch.from_numpy(np.ascontiguousarray(image.transpose(2, 0, 1))),
                torch.from_numpy(np.ascontiguousarray(labels)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument('trn')
    p.add_argument('val')
    p.add_argument('--epochs', type=int, default=10)
    p.add_argument('--batch', type=int, default=8)
    p.add_argument('--threads', type=int, default=2)
    p.add_argument('--workers', type=int, default=2)
    p.add_argument('--lr', type=float, default=1e-4)
    p.add_argument('--step-size', type=int, default=4)
    p.add_argument('--gamma', type=float, default=0.9)
    p.add_argument('--seed', type=int, default=1)
    p.add_argument('--rotate-limit', type=float, default=45)
    p.add_argument('--rotate-prob', type=float, default=0.5)
    p.add_argument('--hflip-prob', type=float, default=0.5)
    p.add_argument('--vflip-prob', type=float, default=0.0)
    p.add_argument('--model', default='unetsmall')
    p.add_argument('--no-flush-denormal', action='store_true')
    p.add_argument('--bf16', action='store_true', help='bfloat16 autocast (loss in float32)')
    p.add_argument('--channels-last', action='store_true', help='model and batches channels last')
    args = p.parse_args()

    torch.set_num_threads(args.threads)
    if not args.no_flush_denormal:
        torch.set_flush_denormal(True)
    torch.manual_seed(args.seed)
    with h5py.File(args.trn, 'r') as f:
        mean = np.asarray(f.attrs['band_mean'], np.float32)
        std = np.asarray(f.attrs['band_std'], np.float32)
        classes = int(f.attrs['num_classes'])
        bands = f['sat_img'].shape[3]
        names = [n.decode() if isinstance(n, bytes) else str(n) for n in f.attrs['class_names']]
    augment = dict(rotate_limit=args.rotate_limit, rotate_prob=args.rotate_prob,
                   hflip_prob=args.hflip_prob, vflip_prob=args.vflip_prob)
    trn = SampleStore(args.trn, mean, std, augment, seed=args.seed)
    val = SampleStore(args.val, mean, std)
    model = gdl_models.UNet(classes, bands, gdl_models.WIDTHS[args.model])
    layout = torch.channels_last if args.channels_last else torch.contiguous_format
    model = model.to(memory_format=layout)

    def forward(images):
        with torch.autocast('cpu', dtype=torch.bfloat16, enabled=args.bf16):
            return model(images.contiguous(memory_format=layout)).float()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=args.step_size, gamma=args.gamma)
    criterion = torch.nn.CrossEntropyLoss(ignore_index=255)
    val_loader = torch.utils.data.DataLoader(val, batch_size=args.batch, shuffle=False,
                                             num_workers=args.workers)
    for epoch in range(args.epochs):
        trn.epoch = epoch  # the workers are started per epoch and copy it
        loader = torch.utils.data.DataLoader(trn, batch_size=args.batch, shuffle=True,
                                             num_workers=args.workers)
        model.train()
        times = dict(data_wait=0.0, forward=0.0, backward=0.0, optimizer=0.0)
        loss_sum, samples = 0.0, 0
        start = time.perf_counter()
        it = iter(loader)
        while True:
            t = time.perf_counter()
            try:
                images, labels = next(it)
            except StopIteration:
                break
            t1 = time.perf_counter()
            times['data_wait'] += t1 - t
            optimizer.zero_grad()
            loss = criterion(forward(images), labels)
            t2 = time.perf_counter()
            loss.backward()
            t3 = time.perf_counter()
            optimizer.step()
            value = loss.item()
            t4 = time.perf_counter()
            times['forward'] += t2 - t1
            times['backward'] += t3 - t2
            times['optimizer'] += t4 - t3
            loss_sum += value * images.shape[0]
            samples += images.shape[0]
        train_seconds = time.perf_counter() - start
        scheduler.step()
        model.eval()
        confusion = torch.zeros(classes, classes, dtype=torch.long)
        val_loss, val_samples = 0.0, 0
        with torch.no_grad():
            for images, labels in val_loader:
                logits = forward(images)
                val_loss += criterion(logits, labels).item() * images.shape[0]
                val_samples += images.shape[0]
                pred = logits.argmax(1)
                ok = labels != 255
                confusion += torch.bincount(labels[ok] * classes + pred[ok],
                                            minlength=classes * classes).reshape(classes, classes)
        tp = confusion.diag().double()
        union = confusion.sum(0).double() + confusion.sum(1).double() - tp
        iou = torch.where(union > 0, tp / union.clamp(min=1), torch.zeros_like(tp))
        present = union > 0
        print(json.dumps(dict(
            epoch=epoch + 1, train_loss=loss_sum / samples, val_loss=val_loss / val_samples,
            mean_iou=float(iou[present].mean()) if present.any() else 0.0,
            iou={names[c] if c < len(names) else str(c): float(iou[c]) for c in range(classes)},
            samples_per_second=samples / train_seconds, train_seconds=train_seconds,
            **times, seconds=time.perf_counter() - start)), flush=True)


if __name__ == '__main__':
    main()
