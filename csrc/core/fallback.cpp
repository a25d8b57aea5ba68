// The boxed CPU fallback on PrivateUse1: an operator with no webgpu kernel copies its inputs to CPU,
// runs the CPU kernel and copies results back, warning once per operator; TORCH_WEBGPU_FALLBACK=0 refuses.
#include "core/fallback.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/CPUFallback.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <set>
#include <tuple>
#include <vector>

namespace webgpu::core {
namespace {

std::mutex g_mutex;
std::map<std::string, uint64_t> g_counts;
std::set<std::string> g_warned;
std::atomic<int> g_override{-1};  // -1: follow the environment, 0: off, 1: on

// Operators the fallback must never serve, even when it is on. The device's core ops: the fallback
// itself is built on them (to_cpu, copy back, empty), so falling back would recurse. And ops whose
// meaning is storage identity, which a CPU copy cannot keep: they would answer wrongly, not fail.
const std::set<std::string> kNeverFallBack = {
    "aten::empty",
    "aten::empty_strided",
    "aten::_copy_from",
    "aten::_copy_from_and_resize",
    "aten::_local_scalar_dense",
    "aten::as_strided",
    "aten::view",
    "aten::_reshape_alias",
    "aten::resize_",
    "aten::set_",
    "aten::is_set_to",
    "aten::record_stream",
    "aten::_pin_memory",
    "aten::is_pinned",
};

bool env_enabled() {
  // Read on every call: tests and users flip it at run time (os.environ), and the cost is nothing next
  // to two device copies.
  const char* v = std::getenv("TORCH_WEBGPU_FALLBACK");
  return v == nullptr || std::string(v) != "0";
}

// A view op's result must share storage with its input; a copy made on CPU would not, so writes
// through it would be lost. (c10's cpu_fallback only warns about this; we refuse.)
bool returns_a_view(const c10::FunctionSchema& schema) {
  for (const auto& r : schema.returns()) {
    const auto* alias = r.alias_info();
    if (alias != nullptr && !alias->isWrite()) return true;
  }
  return false;
}

// The fallback-off refusal, and the count and one-time warning of a run on the CPU: shared by the
// boxed fallback and the float64 stub fallback (begin_cpu_fallback).
void check_fallback_enabled(const std::string& name) {
  TORCH_CHECK_NOT_IMPLEMENTED(fallback_enabled(), "webgpu: operator ", name,
                              " has no webgpu kernel and the CPU fallback is off (TORCH_WEBGPU_FALLBACK=0). "
                              "Unset TORCH_WEBGPU_FALLBACK to run it on the CPU, or add a webgpu kernel.");
}

void count_and_warn(const std::string& name) {
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    ++g_counts[name];
    first = g_warned.insert(name).second;
  }
  if (first) {
    TORCH_WARN("webgpu: operator ", name,
               " has no webgpu kernel; it runs on the CPU (inputs copied to the CPU "
               "and results back), which is slow. Set TORCH_WEBGPU_FALLBACK=0 to make this an error.");
  }
}

// The checks, the count and the warning go by `named` (the operator the caller reached); the CPU runs
// `run`, which takes the same stack (normally the same operator).
void fallback_as(const c10::OperatorHandle& named, const c10::OperatorHandle& run, torch::jit::Stack* stack) {
  const auto& schema = named.schema();
  const std::string name = c10::toString(schema.operator_name());

  TORCH_CHECK_NOT_IMPLEMENTED(!kNeverFallBack.count(schema.name()), "webgpu: operator ", name,
                              " has no webgpu kernel, and it cannot run through the CPU fallback (it is one of "
                              "the device's core operators, or its meaning is storage identity).");
  check_fallback_enabled(name);
  TORCH_CHECK_NOT_IMPLEMENTED(!returns_a_view(schema), "webgpu: view operator ", name,
                              " has no webgpu kernel, and the CPU fallback cannot serve it: it would return a "
                              "copy where a view of the input is expected.");

  count_and_warn(name);
  // Results of a dtype the device cannot hold (complex128, complex32) fail in the copy back, with
  // empty's TypeError naming the dtype.
  at::native::cpu_fallback(run, stack, /*error_on_views=*/true);
}

void webgpu_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) { fallback_as(op, op, stack); }

std::tuple<std::vector<std::string>, std::vector<int64_t>> counts_as_lists() {
  std::vector<std::string> names;
  std::vector<int64_t> counts;
  for (const auto& [k, v] : fallback_counts()) {
    names.push_back(k);
    counts.push_back(static_cast<int64_t>(v));
  }
  return {std::move(names), std::move(counts)};
}

}  // namespace

std::map<std::string, uint64_t> fallback_counts() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_counts;
}

void reset_fallback_counts() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_counts.clear();
  g_warned.clear();
}

void begin_cpu_fallback(const std::string& name) {
  check_fallback_enabled(name);
  count_and_warn(name);
}

void cpu_fallback_boxed(const c10::OperatorHandle& op, torch::jit::Stack* stack) { fallback_as(op, op, stack); }

bool may_fall_back(const c10::OperatorHandle& op) {
  return !kNeverFallBack.count(op.schema().name()) && !returns_a_view(op.schema());
}

void set_fallback_enabled(std::optional<bool> enabled) { g_override = enabled ? int(*enabled) : -1; }

std::optional<bool> fallback_override() {
  const int o = g_override.load();
  return o < 0 ? std::nullopt : std::optional<bool>(o == 1);
}

bool fallback_enabled() {
  const int o = g_override.load();
  return o < 0 ? env_enabled() : o == 1;
}

// Quantized tensors (quint8, qint8, qint32, ...) on webgpu: every operator that reaches the device's
// quantized dispatch key (creating one, or copying a CPU quantized tensor over) raises a TypeError
// naming the op, as an unsupported dtype does (ops/factory.cpp), not "Could not run ... 'Quantizedwebgpu'".
void refuse_quantized(const c10::OperatorHandle& op, torch::jit::Stack*) {
  TORCH_CHECK_TYPE(false, "webgpu: ", op.schema().name(),
                   ": quantized tensors are not supported on the webgpu device. Quantize on the CPU, or keep "
                   "int8 data in torch.int8 tensors (torch._int_mm multiplies them on the device).");
}

// Sparse layouts (COO, CSR, ...) on webgpu: the same, as the NotImplementedError c10 raises for a
// missing kernel, but naming what is missing instead of "Could not run ... 'Sparsewebgpu'".
void refuse_sparse(const c10::OperatorHandle& op, torch::jit::Stack*) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "webgpu: ", op.schema().name(),
                              ": sparse tensors are not supported on the webgpu device. Use dense tensors "
                              "(t.to_dense()) on webgpu, or keep the sparse tensor on the CPU.");
}

}  // namespace webgpu::core

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&webgpu::core::webgpu_cpu_fallback>());
}

TORCH_LIBRARY_IMPL(_, QuantizedPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&webgpu::core::refuse_quantized>());
}

TORCH_LIBRARY_IMPL(_, SparsePrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&webgpu::core::refuse_sparse>());
}

TORCH_LIBRARY_IMPL(_, SparseCsrPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&webgpu::core::refuse_sparse>());
}

// convolution_overrideable / convolution_backward_overrideable: native kernels in ops/conv.cpp.

// The Python face of the fallback, as operators (torch.ops.webgpu.*): no pybind module edit needed.
// They take no tensors, so they register as catch-all kernels.
TORCH_LIBRARY_FRAGMENT(webgpu, m) {
  m.def("fallback_counts() -> (str[], int[])", &webgpu::core::counts_as_lists);
  m.def("reset_fallback_counts() -> ()", &webgpu::core::reset_fallback_counts);
  m.def("set_fallback_enabled(bool? enabled) -> ()", &webgpu::core::set_fallback_enabled);
  m.def("fallback_override() -> bool?", &webgpu::core::fallback_override);
  m.def("fallback_enabled() -> bool", &webgpu::core::fallback_enabled);
}
