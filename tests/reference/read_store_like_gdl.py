"""Opens a GeoDL sample store the way geo-deep-learning's readers do (h5py, sat_img and
map_img) and checks its layout. Usage: read_store_like_gdl.py STORE SAMPLE_SIZE BANDS CLASSES"""
import sys

import h5py
import numpy as np

path, size, bands, classes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
with h5py.File(path, 'r') as f:
    sat, ref = f['sat_img'], f['map_img']
    n = sat.shape[0]
    assert n > 0, 'no sample'
    assert sat.shape == (n, size, size, bands), sat.shape
    assert ref.shape == (n, size, size), ref.shape
    assert ref.dtype == np.uint8, ref.dtype
    # geo-deep-learning's loop: one sample at a time, as numpy arrays.
    for i in range(n):
        image, label = sat[i, ...], ref[i, ...]
        values = set(np.unique(label).tolist())
        assert values <= set(range(classes)) | {f.attrs['ignore_index']}, values
    assert list(f.attrs['class_ids']) == list(range(classes))
    assert len(f.attrs['band_mean']) == bands and len(f.attrs['band_std']) == bands
    assert f['sample_window'].shape == (n, 4) and f['sample_geotransform'].shape == (n, 6)
print('h5py reads %d samples of %dx%dx%d from %s' % (n, size, size, bands, path))
