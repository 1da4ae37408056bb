// What differs between the two LibTorch versions GeoDL builds against, Debian's 1.13 (CPU)
// and the PyPI wheel's 2.12 (CUDA, NCCL), both with -Werror: every version check of the
// engine is here, and the code elsewhere calls these names.
#pragma once

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <c10/core/Allocator.h>
#include <torch/version.h>

#include <cmath>
#include <cstring>
#include <tuple>

// 1 against LibTorch 2.x, 0 against 1.13.
#if TORCH_VERSION_MAJOR >= 2
#define GEODL_TORCH_2 1
#else
#define GEODL_TORCH_2 0
#endif

// c10::Allocator: allocate() lost its const in 2.x, which also added copy_data() to every
// allocator. A GeoDL allocator declares `c10::DataPtr allocate(size_t n) GEODL_ALLOCATE_CONST
// override` and GEODL_ALLOCATOR_COPY_DATA in its class.
#if GEODL_TORCH_2
#define GEODL_ALLOCATE_CONST
#define GEODL_ALLOCATOR_COPY_DATA                                                    \
  void copy_data(void* dest, const void* src, std::size_t count) const override { \
    std::memcpy(dest, src, count);                                                 \
  }
#else
#define GEODL_ALLOCATE_CONST const
#define GEODL_ALLOCATOR_COPY_DATA
#endif

// c10d: in 2.x, Gloo's and NCCL's process groups are Backends; in 1.13 Gloo's is a
// ProcessGroup. Both have the collectives GeoDL calls (allreduce, broadcast).
namespace c10d {
class Backend;
class ProcessGroup;
}  // namespace c10d

namespace geodl::compat {

#if GEODL_TORCH_2
using CollectiveBackend = c10d::Backend;
#else
using CollectiveBackend = c10d::ProcessGroup;
#endif

// Autocast per device type (kCPU, kCUDA): 2.x takes the device type, 1.13 has a function
// per device (and 2.x deprecates those).
inline bool autocastEnabled(c10::DeviceType device) {
#if GEODL_TORCH_2
  return at::autocast::is_autocast_enabled(device);
#else
  return device == c10::DeviceType::CUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
#endif
}

inline at::ScalarType autocastType(c10::DeviceType device) {
#if GEODL_TORCH_2
  return at::autocast::get_autocast_dtype(device);
#else
  return device == c10::DeviceType::CUDA ? at::autocast::get_autocast_gpu_dtype()
                                         : at::autocast::get_autocast_cpu_dtype();
#endif
}

inline void setAutocast(c10::DeviceType device, bool enabled, at::ScalarType type) {
#if GEODL_TORCH_2
  at::autocast::set_autocast_dtype(device, type);
  at::autocast::set_autocast_enabled(device, enabled);
#else
  if (device == c10::DeviceType::CUDA) {
    at::autocast::set_autocast_gpu_dtype(type);
    at::autocast::set_enabled(enabled);
  } else {
    at::autocast::set_autocast_cpu_dtype(type);
    at::autocast::set_cpu_enabled(enabled);
  }
#endif
}

// The key of a parameter's state in torch::optim::Optimizer::state(): its TensorImpl's
// address, as text in 1.13 and as the pointer itself in 2.x.
inline auto optimizerStateKey(const at::Tensor& parameter) {
#if GEODL_TORCH_2
  return static_cast<void*>(parameter.unsafeGetTensorImpl());
#else
  return c10::guts::to_string(parameter.unsafeGetTensorImpl());
#endif
}

// PReLU's backward with one slope for all channels: 1.13 has at::prelu_backward, which 2.x
// replaced; there the same formula is written out, as autograd computes it: under autocast
// the slope was cast to the input's type (bfloat16), both gradients are computed in that
// type, and the slope's goes back to the slope's type.
inline std::tuple<at::Tensor, at::Tensor> preluBackward(const at::Tensor& grad, const at::Tensor& input,
                                                        const at::Tensor& weight) {
#if GEODL_TORCH_2
  const auto positive = input > 0;
  const at::Tensor slope = weight.scalar_type() == input.scalar_type() ? weight : weight.to(input.scalar_type());
  at::Tensor grad_input = at::where(positive, grad, grad * slope);
  at::Tensor grad_weight = at::where(positive, at::zeros_like(grad), grad * input)
                               .sum()
                               .to(weight.scalar_type())
                               .reshape(weight.sizes());
  return {grad_input, grad_weight};
#else
  return at::prelu_backward(grad, input, weight);
#endif
}

// Attention softmax(q k^T / sqrt(d)) v over the last two dimensions of (..., L, d) tensors:
// LibTorch's scaled_dot_product_attention in 2.x (its fused kernels: flash or memory-efficient
// attention on a GPU, a fused loop on the CPU), the three operations written out in 1.13,
// which has none. plainAttention is the written-out form in both.
inline at::Tensor plainAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  const double scale = 1.0 / std::sqrt(double(q.size(-1)));
  return at::matmul((at::matmul(q, k.transpose(-2, -1)) * scale).softmax(-1), v);
}

inline at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
#if GEODL_TORCH_2
  return at::scaled_dot_product_attention(q, k, v);
#else
  return plainAttention(q, k, v);
#endif
}

}  // namespace geodl::compat
