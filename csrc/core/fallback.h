// The CPU fallback for operators with no webgpu kernel: its switch and its per-operator call counts.
// Python reaches these through torch.ops.webgpu.* (registered in fallback.cpp), wrapped by torch_webgpu.fallback.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <ATen/core/dispatch/Dispatcher.h>

namespace webgpu::core {

// Calls that went through the fallback, keyed by operator ("aten::igamma.out").
std::map<std::string, uint64_t> fallback_counts();
// Clears the counts and the warn-once memory (the next fallback of each operator warns again).
void reset_fallback_counts();
// true/false overrides TORCH_WEBGPU_FALLBACK; nullopt goes back to the environment variable.
void set_fallback_enabled(std::optional<bool> enabled);
// The override set by set_fallback_enabled, nullopt when following the environment.
std::optional<bool> fallback_override();
// For kernels that run part of an op on the CPU themselves (float64 stubs, ops/float64.h): raises
// the fallback-off NotImplementedError when the fallback is off, else counts `name` and warns once.
void begin_cpu_fallback(const std::string& name);
// Whether the fallback runs now: the override if set, else TORCH_WEBGPU_FALLBACK != "0".
bool fallback_enabled();
// The boxed CPU fallback itself, for kernels that hand a call over to it (ops/register.h), and whether
// it may serve op at all (not one of the device's core operators, not a view).
void cpu_fallback_boxed(const c10::OperatorHandle& op, torch::jit::Stack* stack);
bool may_fall_back(const c10::OperatorHandle& op);

}  // namespace webgpu::core
