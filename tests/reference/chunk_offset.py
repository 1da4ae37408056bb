"""Prints the byte offset, in the file, of the first chunk of a dataset of an HDF5 file (as
HDF5 itself, through h5py, places it): where a test damages one sample's bytes.
Usage: chunk_offset.py FILE.hdf5 DATASET"""
import sys

import h5py

with h5py.File(sys.argv[1], 'r') as f:
    print(f[sys.argv[2]].id.get_chunk_info(0).byte_offset)
