// Files written by Python's torch.save (the zip format of PyTorch 1.6 and later, and the format
// before it, which _use_new_zipfile_serialization=False still writes) read without
// Python and without LibTorch's unpickler, which cannot build an OrderedDict (the everyday
// torch.save(model.state_dict(), f) failed with "isGenericDict() INTERNAL ASSERT FAILED"):
// dicts and OrderedDicts (their _metadata dropped), lists, tuples, strings, numbers, None,
// tensors and parameters of any dtype on their storages, shared storages shared.
#pragma once

#include <ATen/core/ivalue.h>

#include <string>

namespace geodl {

// The object the file holds, as LibTorch values (an OrderedDict becomes a GenericDict, in
// its order). Throws InputError naming the file: not a zip of torch.save, a record missing,
// or an object of a Python class that is not plain data (named).
c10::IValue readTorchSaveFile(const std::string& path);

// Whether `path` is a torch.save file of the format before PyTorch 1.6 (it starts with that
// format's magic number).
bool isLegacyTorchSaveFile(const std::string& path);

// Whether `path` starts as a safetensors file does: an 8-byte header length, then '{'.
bool isSafetensorsFile(const std::string& path);

// A safetensors file (Hugging Face's format: a JSON header naming each tensor's dtype,
// shape and byte range, then the raw little-endian data), read without Python: its tensors
// by name, in the header's order. Throws InputError naming the file and what is wrong: a
// header past the file's end or not JSON, an unknown dtype, a tensor whose bytes do not fit
// its shape or lie outside the data.
c10::impl::GenericDict readSafetensorsFile(const std::string& path);

}  // namespace geodl
