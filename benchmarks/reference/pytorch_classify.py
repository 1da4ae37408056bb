"""PyTorch reference for the classification benchmark: sliding-window inference the way
geo-deep-learning did it, with Debian's python3-torch (the same LibTorch 1.13) and GDAL's
Python bindings: the whole raster is read into memory, normalized, padded by reflection,
cut into windows (same window, overlap and batch as GeoDL), and the softmax outputs of
overlapping windows are averaged into a full-size probability array before the argmax.
The model is geo-deep-learning's UNetSmall or UNet (gdl_models.py) with the same
architecture as GeoDL's; its weights do not change the speed.

Prints one JSON line: megapixels per second (reading to writing), peak resident memory.
Usage: pytorch_classify.py INPUT OUTPUT --bands 3 --classes 2 [--model unetsmall]
       [--window 256] [--overlap 25] [--batch 4] [--threads 2] [--bf16] [--channels-last]
"""
import argparse
import json
import os
import resource
import sys
import time

import numpy as np
import torch
from osgeo import gdal

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'tests', 'reference'))
import gdl_models  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument('input')
    p.add_argument('output')
    p.add_argument('--bands', type=int, default=3)
    p.add_argument('--classes', type=int, default=2)
    p.add_argument('--model', default='unetsmall')
    p.add_argument('--window', type=int, default=256)
    p.add_argument('--overlap', type=float, default=25)
    p.add_argument('--batch', type=int, default=4)
    p.add_argument('--threads', type=int, default=2)
    p.add_argument('--bf16', action='store_true', help='bfloat16 autocast (softmax in float32)')
    p.add_argument('--channels-last', action='store_true', help='model and batches channels last')
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    torch.set_flush_denormal(True)
    start = time.perf_counter()
    model = gdl_models.UNet(args.classes, args.bands, gdl_models.WIDTHS[args.model]).eval()
    layout = torch.channels_last if args.channels_last else torch.contiguous_format
    model = model.to(memory_format=layout)
    ds = gdal.Open(args.input)
    image = ds.ReadAsArray().astype(np.float32)  # bands x H x W: the whole raster
    if image.ndim == 2:
        image = image[None]
    mean = image.reshape(image.shape[0], -1).mean(1)[:, None, None]
    std = image.reshape(image.shape[0], -1).std(1)[:, None, None] + 1e-6
    image = (image - mean) / std
    _, h, w = image.shape
    win = args.window
    overlap = int(round(win * args.overlap / 100))
    stride = win - overlap
    ph, pw = max(win, h + (-(h - win) % stride if h > win else 0)), max(win, w + (-(w - win) % stride if w > win else 0))
    padded = np.pad(image, ((0, 0), (0, ph - h), (0, pw - w)), mode='reflect')
    probs = np.zeros((args.classes, ph, pw), np.float32)
    counts = np.zeros((ph, pw), np.float32)
    origins = [(y, x) for y in range(0, ph - win + 1, stride) for x in range(0, pw - win + 1, stride)]
    with torch.no_grad():
        for i in range(0, len(origins), args.batch):
            chunk = origins[i:i + args.batch]
            batch = torch.from_numpy(np.stack([padded[:, y:y + win, x:x + win] for y, x in chunk]))
            with torch.autocast('cpu', dtype=torch.bfloat16, enabled=args.bf16):
                logits = model(batch.contiguous(memory_format=layout))
            out = torch.softmax(logits.float(), 1).numpy()
            for (y, x), o in zip(chunk, out):
                probs[:, y:y + win, x:x + win] += o
                counts[y:y + win, x:x + win] += 1
    classes = (probs[:, :h, :w] / counts[None, :h, :w]).argmax(0).astype(np.uint8)
    driver = gdal.GetDriverByName('GTiff')
    out = driver.Create(args.output, w, h, 1, gdal.GDT_Byte, ['TILED=YES', 'COMPRESS=DEFLATE'])
    out.SetGeoTransform(ds.GetGeoTransform())
    out.SetProjection(ds.GetProjection())
    out.GetRasterBand(1).WriteArray(classes)
    out = None
    seconds = time.perf_counter() - start
    print(json.dumps(dict(megapixels=h * w / 1e6, seconds=seconds, mpx_per_second=h * w / 1e6 / seconds,
                          peak_rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
                          windows=len(origins))), flush=True)


if __name__ == '__main__':
    main()
