#include "core/checkpoint.h"

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include "core/torch_compat.h"

namespace geodl {

using torch::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

Tensor rngState(const torch::Device& device) {
  auto generator = at::globalContext().defaultGenerator(device);
  std::lock_guard<std::mutex> lock(generator.mutex());
  return generator.get_state();
}

RngReplay::RngReplay(const Tensor& state, const torch::Device& device) {
  if (!state.defined()) return;
  generator_ = at::globalContext().defaultGenerator(device);
  std::lock_guard<std::mutex> lock(generator_.mutex());
  previous_ = generator_.get_state();
  generator_.set_state(state);
}

RngReplay::~RngReplay() {
  if (!previous_.defined()) return;
  std::lock_guard<std::mutex> lock(generator_.mutex());
  generator_.set_state(previous_);
}

namespace {

void setAutocast(const AutocastState& s) {
  compat::setAutocast(c10::DeviceType::CPU, s.cpu, s.cpu_type);
  compat::setAutocast(c10::DeviceType::CUDA, s.gpu, s.gpu_type);
}

}  // namespace

AutocastState AutocastState::current() {
  AutocastState s;
  s.cpu = compat::autocastEnabled(c10::DeviceType::CPU);
  s.cpu_type = compat::autocastType(c10::DeviceType::CPU);
  s.gpu = compat::autocastEnabled(c10::DeviceType::CUDA);
  s.gpu_type = compat::autocastType(c10::DeviceType::CUDA);
  return s;
}

void AutocastState::save(AutogradContext* ctx) const {
  ctx->saved_data["autocast_cpu"] = cpu;
  ctx->saved_data["autocast_cpu_type"] = static_cast<int64_t>(cpu_type);
  ctx->saved_data["autocast_gpu"] = gpu;
  ctx->saved_data["autocast_gpu_type"] = static_cast<int64_t>(gpu_type);
}

AutocastState AutocastState::saved(AutogradContext* ctx) {
  AutocastState s;
  s.cpu = ctx->saved_data["autocast_cpu"].toBool();
  s.cpu_type = static_cast<at::ScalarType>(ctx->saved_data["autocast_cpu_type"].toInt());
  s.gpu = ctx->saved_data["autocast_gpu"].toBool();
  s.gpu_type = static_cast<at::ScalarType>(ctx->saved_data["autocast_gpu_type"].toInt());
  return s;
}

AutocastReplay::AutocastReplay(const AutocastState& state) : previous_(AutocastState::current()) {
  changed_ = state.cpu != previous_.cpu || state.gpu != previous_.gpu ||
             state.cpu_type != previous_.cpu_type || state.gpu_type != previous_.gpu_type;
  if (changed_) setAutocast(state);
}

AutocastReplay::~AutocastReplay() {
  if (!changed_) return;
  setAutocast(previous_);
  // The casts cached for the recompute are not the next forward's.
  at::autocast::clear_cache();
}

namespace {

struct FunctionHolder : torch::CustomClassHolder {
  explicit FunctionHolder(CheckpointFn f) : fn(std::move(f)) {}
  CheckpointFn fn;
};

// Copies of a module's buffers, written back on destruction.
class BufferRestore {
 public:
  explicit BufferRestore(torch::nn::Module& module) {
    for (auto& b : module.buffers()) {
      buffers_.push_back(b);
      copies_.push_back(b.clone());
    }
  }
  ~BufferRestore() {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < buffers_.size(); ++i) buffers_[i].copy_(copies_[i]);
  }

 private:
  std::vector<Tensor> buffers_, copies_;
};

struct CheckpointFunction : torch::autograd::Function<CheckpointFunction> {
  static Tensor forward(AutogradContext* ctx, at::TensorList inputs, at::TensorList params,
                        const CheckpointFn* fn, torch::nn::Module* module) {
    const auto device = inputs.front().device();
    ctx->saved_data["rng"] = rngState(device);
    ctx->saved_data["fn"] = c10::IValue::make_capsule(c10::make_intrusive<FunctionHolder>(*fn));
    ctx->saved_data["module"] = reinterpret_cast<int64_t>(module);
    ctx->saved_data["n_inputs"] = static_cast<int64_t>(inputs.size());
    ctx->saved_data["n_params"] = static_cast<int64_t>(params.size());
    AutocastState::current().save(ctx);
    ctx->save_for_backward(inputs.vec());
    return (*fn)(inputs.vec());  // grad mode is off: no activation is kept
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto holder = c10::static_intrusive_pointer_cast<FunctionHolder>(
        ctx->saved_data["fn"].toCapsule());
    auto* module = reinterpret_cast<torch::nn::Module*>(ctx->saved_data["module"].toInt());
    const auto n_inputs = static_cast<size_t>(ctx->saved_data["n_inputs"].toInt());
    const auto n_params = static_cast<size_t>(ctx->saved_data["n_params"].toInt());
    auto saved = ctx->get_saved_variables();

    std::vector<Tensor> inputs;
    std::vector<Tensor> targets;
    std::vector<size_t> target_slots;  // index in the returned gradient list
    for (size_t i = 0; i < n_inputs; ++i) {
      Tensor input = saved[i].detach();
      if (ctx->needs_input_grad(i) && input.is_floating_point()) {
        input.requires_grad_(true);
        targets.push_back(input);
        target_slots.push_back(i);
      }
      inputs.push_back(input);
    }
    saved.clear();
    auto params = module->parameters();
    for (size_t j = 0; j < n_params && j < params.size(); ++j) {
      if (ctx->needs_input_grad(n_inputs + j)) {
        targets.push_back(params[j]);
        target_slots.push_back(n_inputs + j);
      }
    }

    // Buffers are put back only once the recomputed graph has served: BatchNorm's
    // backward checks that its saved running statistics were not modified.
    BufferRestore restore(*module);
    Tensor output;
    {
      RngReplay replay(ctx->saved_data["rng"].toTensor(), inputs.front().device());
      AutocastReplay autocast(AutocastState::saved(ctx));
      torch::AutoGradMode grad_mode(true);
      output = holder->fn(inputs);
    }
    variable_list result(n_inputs + n_params + 2);
    if (targets.empty() || !output.requires_grad()) return result;
    auto target_grads = torch::autograd::grad({output}, targets, {grads[0]},
                                              /*retain_graph=*/false, /*create_graph=*/false,
                                              /*allow_unused=*/true);
    for (size_t k = 0; k < target_slots.size(); ++k) result[target_slots[k]] = target_grads[k];
    return result;
  }
};

}  // namespace

Tensor checkpoint(const CheckpointFn& fn, const std::vector<Tensor>& inputs,
                  torch::nn::Module& module) {
  TORCH_CHECK(!inputs.empty(), "checkpoint needs at least one input tensor");
  auto params = module.parameters();
  return CheckpointFunction::apply(at::TensorList(inputs), at::TensorList(params), &fn, &module);
}

Tensor checkpointedIf(bool lean, const CheckpointFn& fn, const std::vector<Tensor>& inputs, torch::nn::Module& module) {
  return lean ? checkpoint(fn, inputs, module) : fn(inputs);
}

}  // namespace geodl
