"""Writes a sample store the way geo-deep-learning's images_to_samples.py does (h5py,
sat_img uint8 N x S x S x B, map_img uint8 N x S x S, no other metadata), with
sat_img[i, r, c, b] = i + r + c + b and map_img[i, r, c] = (r + c) % 3.
Usage: write_gdl_store.py OUT.hdf5"""
import sys

import h5py
import numpy as np

n, s, b = 3, 8, 4
i, r, c, k = np.meshgrid(np.arange(n), np.arange(s), np.arange(s), np.arange(b), indexing='ij')
with h5py.File(sys.argv[1], 'w') as f:
    f.create_dataset('sat_img', data=(i + r + c + k).astype(np.uint8))
    f.create_dataset('map_img', data=((r + c) % 3)[..., 0].astype(np.uint8))
