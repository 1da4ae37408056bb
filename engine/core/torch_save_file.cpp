#include "core/torch_save_file.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <vector>

#include "base/errors.h"

namespace geodl {

namespace {

// A value on the unpickler's stack: LibTorch's, or what only the unpickler needs (a Python
// global being called, a storage, a mark).
struct Node;
using NodePtr = std::shared_ptr<Node>;
struct Node {
  enum class Kind { Value, Dict, List, Tuple, Global, Storage, Mark } kind = Kind::Value;
  c10::IValue value;                                  // Kind::Value (tensors too)
  std::vector<std::pair<NodePtr, NodePtr>> entries;   // Kind::Dict, in order
  std::vector<NodePtr> items;                         // Kind::List and Kind::Tuple
  std::string module, name;                           // Kind::Global
  torch::Tensor storage;                              // Kind::Storage: one dimension
};

NodePtr value(c10::IValue v) {
  auto n = std::make_shared<Node>();
  n->value = std::move(v);
  return n;
}
NodePtr ofKind(Node::Kind kind) {
  auto n = std::make_shared<Node>();
  n->kind = kind;
  return n;
}

// The storage classes torch.save names, and their dtypes.
const std::map<std::string, torch::Dtype>& storageTypes() {
  static const std::map<std::string, torch::Dtype> types = {
      {"FloatStorage", torch::kFloat32}, {"DoubleStorage", torch::kFloat64}, {"HalfStorage", torch::kFloat16},
      {"BFloat16Storage", torch::kBFloat16}, {"LongStorage", torch::kInt64}, {"IntStorage", torch::kInt32},
      {"ShortStorage", torch::kInt16}, {"CharStorage", torch::kInt8}, {"ByteStorage", torch::kUInt8},
      {"BoolStorage", torch::kBool}};
  return types;
}

// A storage's tensor (one dimension) from its key, dtype and element count.
using StorageSource = std::function<torch::Tensor(const std::string& key, torch::Dtype dtype, int64_t numel)>;

class Unpickler {
 public:
  // The pickle of `data` from `at` to its STOP.
  Unpickler(const std::string& path, StorageSource storages, const char* data, size_t size, size_t at = 0)
      : path_(path), source_(std::move(storages)), data_(data), size_(size), at_(at) {}

  // Where the pickle ended (after run).
  size_t end() const { return at_; }

  c10::IValue run() {
    for (;;) {
      const uint8_t op = byte();
      switch (op) {
        case 0x80: byte(); break;  // PROTO
        case '.': return toIValue(pop());  // STOP
        case '}': push(ofKind(Node::Kind::Dict)); break;
        case ']': push(ofKind(Node::Kind::List)); break;
        case ')': push(ofKind(Node::Kind::Tuple)); break;
        case '(': push(ofKind(Node::Kind::Mark)); break;
        case 'N': push(value(c10::IValue())); break;
        case 0x88: push(value(true)); break;
        case 0x89: push(value(false)); break;
        case 'K': push(value(int64_t(byte()))); break;
        case 'M': push(value(int64_t(little(2)))); break;
        case 'J': push(value(int64_t(int32_t(uint32_t(little(4)))))); break;
        case 0x8a: {  // LONG1: a little-endian two's complement integer of n bytes
          const size_t n = byte();
          if (n > 8) fail("an integer of " + std::to_string(n) + " bytes");
          uint64_t v = little(n);
          if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t(0) << (8 * n);
          push(value(int64_t(v)));
          break;
        }
        case 'G': {  // BINFLOAT: big-endian double
          uint64_t bits = 0;
          for (int i = 0; i < 8; ++i) bits = (bits << 8) | byte();
          double d;
          std::memcpy(&d, &bits, sizeof d);
          push(value(d));
          break;
        }
        case 'X': push(value(text(little(4)))); break;      // BINUNICODE
        case 0x8c: push(value(text(byte()))); break;        // SHORT_BINUNICODE
        case 'T': push(value(text(little(4)))); break;      // BINSTRING
        case 'U': push(value(text(byte()))); break;         // SHORT_BINSTRING
        case 'c': {                                         // GLOBAL
          auto g = ofKind(Node::Kind::Global);
          g->module = line();
          g->name = line();
          push(g);
          break;
        }
        case 'q': memo_[byte()] = top(); break;                 // BINPUT
        case 'r': memo_[little(4)] = top(); break;              // LONG_BINPUT
        case 0x94: memo_[memo_.size()] = top(); break;          // MEMOIZE
        case 'h': push(memo(byte())); break;                    // BINGET
        case 'j': push(memo(little(4))); break;                 // LONG_BINGET
        case 't': push(tuple(popToMark())); break;
        case 0x85: push(tuple(popN(1))); break;
        case 0x86: push(tuple(popN(2))); break;
        case 0x87: push(tuple(popN(3))); break;
        case 'a': {  // APPEND
          auto v = pop();
          list(top())->items.push_back(v);
          break;
        }
        case 'e': {  // APPENDS
          auto vs = popToMark();
          auto& items = list(top())->items;
          items.insert(items.end(), vs.begin(), vs.end());
          break;
        }
        case 's': {  // SETITEM
          auto v = pop(), k = pop();
          dict(top())->entries.emplace_back(k, v);
          break;
        }
        case 'u': {  // SETITEMS
          auto kv = popToMark();
          auto d = dict(top());
          for (size_t i = 0; i + 1 < kv.size(); i += 2) d->entries.emplace_back(kv[i], kv[i + 1]);
          break;
        }
        case 'Q': push(persistent(pop())); break;  // BINPERSID
        case 'R': {                                // REDUCE
          auto args = pop(), callable = pop();
          push(reduce(callable, args));
          break;
        }
        case 0x81: {  // NEWOBJ: an instance of a Python class
          pop();
          const auto cls = pop();
          fail("an object of the Python class " + (cls->kind == Node::Kind::Global ? cls->module + "." + cls->name : "?"));
        }
        case 'b': pop(); break;  // BUILD: an OrderedDict's _metadata, a tensor's state: not needed
        default: fail("the pickle operation 0x" + hex(op));
      }
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError("'" + path_ + "' cannot be read as a file of torch.save: " + what +
                     " is not plain data (a dict of tensors); save a state dict: torch.save(model.state_dict(), f)");
  }
  static std::string hex(unsigned v) {
    char b[8];
    std::snprintf(b, sizeof b, "%02x", v);
    return b;
  }
  uint8_t byte() {
    if (at_ >= size_) fail("a pickle cut short");
    return uint8_t(data_[at_++]);
  }
  uint64_t little(size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t(byte()) << (8 * i);
    return v;
  }
  std::string text(uint64_t n) {
    if (n > size_ - at_) fail("a pickle cut short");
    std::string s(data_ + at_, size_t(n));
    at_ += size_t(n);
    return s;
  }
  std::string line() {
    std::string s;
    for (char c = char(byte()); c != '\n'; c = char(byte())) s += c;
    return s;
  }
  void push(NodePtr n) { stack_.push_back(std::move(n)); }
  NodePtr pop() {
    if (stack_.empty()) fail("a damaged pickle");
    auto n = stack_.back();
    stack_.pop_back();
    return n;
  }
  NodePtr top() {
    if (stack_.empty()) fail("a damaged pickle");
    return stack_.back();
  }
  NodePtr memo(uint64_t key) {
    auto it = memo_.find(key);
    if (it == memo_.end()) fail("a damaged pickle");
    return it->second;
  }
  std::vector<NodePtr> popN(size_t n) {
    if (stack_.size() < n) fail("a damaged pickle");
    std::vector<NodePtr> v(stack_.end() - std::ptrdiff_t(n), stack_.end());
    stack_.resize(stack_.size() - n);
    return v;
  }
  std::vector<NodePtr> popToMark() {
    std::vector<NodePtr> v;
    for (;;) {
      auto n = pop();
      if (n->kind == Node::Kind::Mark) break;
      v.push_back(n);
    }
    return {v.rbegin(), v.rend()};
  }
  static NodePtr tuple(std::vector<NodePtr> items) {
    auto t = ofKind(Node::Kind::Tuple);
    t->items = std::move(items);
    return t;
  }
  NodePtr dict(const NodePtr& n) {
    if (n->kind != Node::Kind::Dict) fail("a SETITEMS on something else than a dict");
    return n;
  }
  NodePtr list(const NodePtr& n) {
    if (n->kind != Node::Kind::List) fail("an APPENDS on something else than a list");
    return n;
  }
  int64_t integer(const NodePtr& n) {
    if (n->kind != Node::Kind::Value || !n->value.isInt()) fail("a tensor's description");
    return n->value.toInt();
  }
  std::vector<int64_t> integers(const NodePtr& n) {
    if (n->kind != Node::Kind::Tuple) fail("a tensor's description");
    std::vector<int64_t> v;
    for (const auto& i : n->items) v.push_back(integer(i));
    return v;
  }

  // ('storage', torch.FloatStorage, key, location, numel[, view]): the storage as a 1-d tensor.
  NodePtr persistent(const NodePtr& id) {
    if (id->kind != Node::Kind::Tuple || id->items.size() < 5 || id->items[1]->kind != Node::Kind::Global ||
        id->items[2]->kind != Node::Kind::Value || !id->items[2]->value.isString())
      fail("a persistent object that is not a tensor's storage");
    if (id->items.size() > 5 && !(id->items[5]->kind == Node::Kind::Value && id->items[5]->value.isNone()))
      fail("a view of a storage (torch.save of PyTorch before 0.4)");
    const std::string type = id->items[1]->name, key = id->items[2]->value.toStringRef();
    const auto dtype = storageTypes().find(type);
    if (dtype == storageTypes().end()) fail("a storage of type torch." + type);
    auto& storage = storages_[key];
    if (!storage.defined()) {
      storage = source_(key, dtype->second, integer(id->items[4]));
      if (!storage.defined()) fail("a tensor whose data (" + key + ") is missing");
    }
    auto s = ofKind(Node::Kind::Storage);
    s->storage = storage;
    return s;
  }

  NodePtr reduce(const NodePtr& callable, const NodePtr& args) {
    if (callable->kind != Node::Kind::Global) fail("a call of something else than a class or function");
    const std::string name = callable->module + "." + callable->name;
    const auto& a = args->items;
    if (name == "collections.OrderedDict") return ofKind(Node::Kind::Dict);
    if (name == "torch._utils._rebuild_tensor_v2" || name == "torch._utils._rebuild_tensor") {
      if (a.size() < 4 || a[0]->kind != Node::Kind::Storage) fail("a tensor's description");
      const int64_t offset = integer(a[1]);
      const auto sizes = integers(a[2]), strides = integers(a[3]);
      torch::Tensor t = a[0]->storage.as_strided(sizes, strides, offset);
      return value(t);
    }
    if (name == "torch._utils._rebuild_parameter" || name == "torch._utils._rebuild_parameter_with_state") {
      if (a.empty() || a[0]->kind != Node::Kind::Value || !a[0]->value.isTensor()) fail("a parameter's description");
      return a[0];
    }
    fail("an object of the Python class " + name);
  }

  c10::IValue toIValue(const NodePtr& n) {
    switch (n->kind) {
      case Node::Kind::Value: return n->value;
      case Node::Kind::Dict: {
        c10::impl::GenericDict d(c10::AnyType::get(), c10::AnyType::get());
        for (const auto& [k, v] : n->entries) d.insert_or_assign(toIValue(k), toIValue(v));
        return d;
      }
      case Node::Kind::List: {
        c10::impl::GenericList l(c10::AnyType::get());
        for (const auto& i : n->items) l.push_back(toIValue(i));
        return l;
      }
      case Node::Kind::Tuple: {
        std::vector<c10::IValue> items;
        for (const auto& i : n->items) items.push_back(toIValue(i));
        return c10::ivalue::Tuple::create(std::move(items));
      }
      default: fail("a " + std::string(n->kind == Node::Kind::Global ? "Python global (" + n->module + "." + n->name + ")" : "storage") + " outside a tensor");
    }
  }

  const std::string& path_;
  StorageSource source_;
  const char* data_;
  size_t size_, at_ = 0;
  std::vector<NodePtr> stack_;
  std::map<uint64_t, NodePtr> memo_;
  std::map<std::string, torch::Tensor> storages_;
};

}  // namespace

namespace {

// torch.save's format before PyTorch 1.6 (and _use_new_zipfile_serialization=False): five
// pickles and the storages' bytes in one stream. The first pickle is the magic number (a
// 10-byte integer), then the protocol version (1001), the system's description (a dict), the
// object (its storages by key), the sorted list of the storages' keys; then for each key in
// that order its element count (8 bytes, little-endian) and its elements.
constexpr unsigned char kLegacyMagic[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46,
                                          0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19, 0x2e};

bool isLegacyTorchSave(const std::vector<char>& bytes) {
  return bytes.size() >= sizeof kLegacyMagic && std::memcmp(bytes.data(), kLegacyMagic, sizeof kLegacyMagic) == 0;
}

c10::IValue readLegacyTorchSave(const std::string& path, const std::vector<char>& bytes) {
  const auto damaged = [&](const std::string& what) {
    return InputError("'" + path + "' is a torch.save file of the format before PyTorch 1.6 whose " + what +
                      ": the file is damaged or cut short; save it again");
  };
  const auto none = [](const std::string&, torch::Dtype, int64_t) -> torch::Tensor {
    throw InputError("a storage outside the saved object");
  };
  size_t at = sizeof kLegacyMagic;
  Unpickler protocol(path, none, bytes.data(), bytes.size(), at);
  const c10::IValue version = protocol.run();
  if (!version.isInt() || version.toInt() != 1001) throw damaged("protocol version is not 1001");
  Unpickler system(path, none, bytes.data(), bytes.size(), protocol.end());
  const c10::IValue info = system.run();
  if (info.isGenericDict()) {
    const auto d = info.toGenericDict();
    if (d.contains("little_endian") && d.at("little_endian").isBool() && !d.at("little_endian").toBool())
      throw InputError("'" + path + "' was saved on a big-endian machine; save it again on a little-endian one");
  }
  // The storages, allocated as the object names them and filled once their bytes are reached.
  std::map<std::string, torch::Tensor> storages;
  Unpickler object(path,
                   [&](const std::string& key, torch::Dtype dtype, int64_t numel) {
                     auto& s = storages[key];
                     if (!s.defined()) s = torch::empty({numel}, torch::TensorOptions().dtype(dtype));
                     return s;
                   },
                   bytes.data(), bytes.size(), system.end());
  const c10::IValue value = object.run();
  Unpickler keys_pickle(path, none, bytes.data(), bytes.size(), object.end());
  const c10::IValue keys = keys_pickle.run();
  if (!keys.isList()) throw damaged("list of storages is missing");
  at = keys_pickle.end();
  for (const auto& k : keys.toListRef()) {
    if (!k.isString()) throw damaged("list of storages holds something else than keys");
    const auto it = storages.find(k.toStringRef());
    if (it == storages.end()) throw damaged("storage " + k.toStringRef() + " is not the object's");
    if (bytes.size() - at < 8) throw damaged("storage " + k.toStringRef() + " is cut short");
    int64_t numel = 0;
    std::memcpy(&numel, bytes.data() + at, 8);
    at += 8;
    torch::Tensor& s = it->second;
    const size_t length = size_t(s.numel()) * c10::elementSize(s.scalar_type());
    if (numel != s.numel() || bytes.size() - at < length) throw damaged("storage " + k.toStringRef() + " is cut short");
    std::memcpy(s.data_ptr(), bytes.data() + at, length);
    at += length;
  }
  if (storages.size() != keys.toListRef().size()) throw damaged("list of storages misses some");
  return value;
}

}  // namespace

bool isLegacyTorchSaveFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  char head[sizeof kLegacyMagic] = {0};
  return file.read(head, sizeof head) && std::memcmp(head, kLegacyMagic, sizeof head) == 0;
}

c10::IValue readTorchSaveFile(const std::string& path) {
  if (isLegacyTorchSaveFile(path)) {
    std::ifstream file(path, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    if (isLegacyTorchSave(bytes)) return readLegacyTorchSave(path, bytes);
  }
  std::unique_ptr<caffe2::serialize::PyTorchStreamReader> archive;
  try {
    archive = std::make_unique<caffe2::serialize::PyTorchStreamReader>(path);
  } catch (const c10::Error&) {
    throw InputError("'" + path + "' is not a file of torch.save (a zip archive of PyTorch 1.6 or later, or the "
                     "format before it); save it again with a current PyTorch: torch.save(torch.load(f), f)");
  }
  if (!archive->hasRecord("data.pkl"))
    throw InputError("'" + path + "' is a PyTorch archive without data.pkl (a TorchScript module?); give a file "
                     "of torch.save");
  auto [data, size] = archive->getRecord("data.pkl");
  caffe2::serialize::PyTorchStreamReader& records = *archive;
  Unpickler unpickler(path,
                      [&](const std::string& key, torch::Dtype dtype, int64_t) -> torch::Tensor {
                        const std::string record = "data/" + key;
                        if (!records.hasRecord(record)) return {};
                        auto [bytes, length] = records.getRecord(record);
                        const int64_t element = int64_t(c10::elementSize(dtype));
                        torch::Tensor s = torch::empty({int64_t(length) / element}, torch::TensorOptions().dtype(dtype));
                        std::memcpy(s.data_ptr(), bytes.get(), size_t(s.numel() * element));
                        return s;
                      },
                      static_cast<const char*>(data.get()), size);
  return unpickler.run();
}

bool isSafetensorsFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  unsigned char head[9] = {0};
  if (!file.read(reinterpret_cast<char*>(head), 9)) return false;
  uint64_t length = 0;
  for (int i = 0; i < 8; ++i) length |= uint64_t(head[i]) << (8 * i);
  return head[8] == '{' && length >= 2 && length < (uint64_t(1) << 32);
}

c10::impl::GenericDict readSafetensorsFile(const std::string& path) {
  const auto bad = [&](const std::string& what) {
    return InputError("'" + path + "' is not a valid safetensors file: " + what +
                      "; write it again (safetensors.torch.save_file)");
  };
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError("cannot read the safetensors file '" + path + "': check the path");
  file.seekg(0, std::ios::end);
  const uint64_t size = uint64_t(file.tellg());
  file.seekg(0);
  unsigned char head[8] = {0};
  if (!file.read(reinterpret_cast<char*>(head), 8)) throw bad("it is shorter than its 8-byte header length");
  uint64_t length = 0;
  for (int i = 0; i < 8; ++i) length |= uint64_t(head[i]) << (8 * i);
  if (length > size - 8) throw bad("its header (" + std::to_string(length) + " bytes) runs past the end of the file");
  std::string text(size_t(length), '\0');
  file.read(text.data(), std::streamsize(length));
  nlohmann::ordered_json header;
  try {
    header = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw bad(std::string("its header is not JSON (") + e.what() + ")");
  }
  if (!header.is_object()) throw bad("its header is not a JSON object");
  static const std::map<std::string, torch::Dtype> dtypes = {
      {"F64", torch::kFloat64}, {"F32", torch::kFloat32}, {"F16", torch::kFloat16}, {"BF16", torch::kBFloat16},
      {"I64", torch::kInt64},   {"I32", torch::kInt32},   {"I16", torch::kInt16},   {"I8", torch::kInt8},
      {"U8", torch::kUInt8},    {"BOOL", torch::kBool}};
  const uint64_t data_start = 8 + length, data_size = size - data_start;
  c10::impl::GenericDict tensors(c10::StringType::get(), c10::TensorType::get());
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    try {
      const std::string dtype = entry.at("dtype").get<std::string>();
      const auto type = dtypes.find(dtype);
      if (type == dtypes.end()) throw bad("the tensor '" + name + "' has the dtype " + dtype + ", which GeoDL does not read");
      const auto shape = entry.at("shape").get<std::vector<int64_t>>();
      const auto offsets = entry.at("data_offsets").get<std::vector<uint64_t>>();
      if (offsets.size() != 2 || offsets[0] > offsets[1] || offsets[1] > data_size)
        throw bad("the bytes of the tensor '" + name + "' lie outside its data");
      int64_t numel = 1;
      for (int64_t d : shape) {
        if (d < 0) throw bad("the tensor '" + name + "' has a negative dimension");
        numel *= d;
      }
      const uint64_t bytes = uint64_t(numel) * c10::elementSize(type->second);
      if (bytes != offsets[1] - offsets[0])
        throw bad("the tensor '" + name + "' has " + std::to_string(offsets[1] - offsets[0]) + " bytes for its shape's " +
                  std::to_string(bytes));
      torch::Tensor t = torch::empty(shape, torch::TensorOptions().dtype(type->second));
      file.seekg(std::streamoff(data_start + offsets[0]));
      if (bytes && !file.read(static_cast<char*>(t.data_ptr()), std::streamsize(bytes)))
        throw IoError("reading the tensor '" + name + "' of '" + path + "' failed");
      tensors.insert(name, t);
    } catch (const nlohmann::json::exception& e) {
      throw bad("the header's entry of '" + name + "' is malformed (" + e.what() + ")");
    }
  }
  return tensors;
}

}  // namespace geodl
