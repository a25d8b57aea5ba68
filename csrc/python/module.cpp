// torch_webgpu._C: the Python face of the runtime (device queries, synchronisation, memory stats,
// counters, seeds). Ops need no bindings: they register with the dispatcher when this loads.
#include <execinfo.h>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <utility>

#include <torch/csrc/Dtype.h>
#include <torch/csrc/Generator.h>
#include <torch/extension.h>
#include <pybind11/stl.h>

#include "core/core.h"
#include "engines/gemm.h"
#include "kernel/device.h"
#include "kernel/kernel.h"
#include "ops/nn_common.h"
#include "runtime/allocator.h"
#include "runtime/device.h"
#include "runtime/pipeline.h"
#include "runtime/stream.h"

namespace py = pybind11;
using namespace webgpu;

namespace {

// TORCH_WEBGPU_SEGV_TRACE=1 prints a native backtrace on a crash (a debugging aid for drivers
// and machines without a debugger).
void segv_handler(int sig) {
  void* frames[64];
  int n = backtrace(frames, 64);
  fprintf(stderr, "torch_webgpu: fatal signal %d, native backtrace:\n", sig);
  backtrace_symbols_fd(frames, n, 2);
  signal(sig, SIG_DFL);
  raise(sig);
}

// Every device function below goes through here: in a forked child it raises (core.h).
int resolve(int index) {
  core::check_not_forked();
  return index < 0 ? core::current_device() : index;
}

// _launch_wgsl: one dispatch of a WGSL body given as text (generated kernels: torch.compile's
// WGSL codegen, probes). args: (tensor, element type, writable) bound in order as b0, b1, ...
// (the whole storage block: index with the tensor's storage_offset); params: (name, type, value)
// with type u32, i32, f32, u32s, i32s or f32s, read in WGSL as P.name / P_name(i).
const char* storage_elem(const std::string& e) {
  static const char* known[] = {"u32",       "i32",       "f32",       "f16",         "vec2<u32>",  "vec4<u32>",
                                "vec4<f32>", "vec2<f32>", "vec4<i32>", "atomic<u32>", "atomic<i32>"};
  for (const char* k : known)
    if (e == k) return k;
  TORCH_CHECK(false, "webgpu: _launch_wgsl: unsupported storage element type '", e, "'");
}

void launch_wgsl(const std::string& key, const std::string& body, const py::list& args, const py::list& params,
                 uint64_t groups, const std::string& directives, const std::vector<std::string>& libraries,
                 const std::string& index_error_op) {
  TORCH_CHECK(args.size() >= 1 && args.size() <= 16, "webgpu: _launch_wgsl: ", key,
              ": between 1 and 16 storage arguments, got ", args.size());
  std::vector<at::Tensor> tensors;
  std::vector<kernel::Storage> storage;
  tensors.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const py::tuple a = args[i].cast<py::tuple>();
    TORCH_CHECK(a.size() == 3, "webgpu: _launch_wgsl: ", key, ": argument ", i, " is not (tensor, type, writable)");
    tensors.push_back(a[0].cast<at::Tensor>());
    const at::Tensor& t = tensors.back();
    TORCH_CHECK(t.device().is_privateuseone(), "webgpu: _launch_wgsl: ", key, ": argument ", i, " is on ", t.device(),
                ", not a webgpu device");
    TORCH_CHECK(t.device() == tensors.front().device(), "webgpu: _launch_wgsl: ", key,
                ": arguments on different devices (", tensors.front().device(), " and ", t.device(), ")");
    const auto span = kernel::byte_span(t);
    const kernel::Window w = kernel::window(t, 0, span.second, key);
    TORCH_CHECK(w.start == 0, "webgpu: _launch_wgsl: ", key, ": argument ", i,
                " lies past the adapter's maxStorageBufferBindingSize");
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const py::tuple a = args[i].cast<py::tuple>();
    storage.push_back(
        {&tensors[i], kernel::numbered_name("b", i), storage_elem(a[1].cast<std::string>()), a[2].cast<bool>()});
  }
  kernel::Params p;
  for (const auto& item : params) {
    const py::tuple t = item.cast<py::tuple>();
    TORCH_CHECK(t.size() == 3, "webgpu: _launch_wgsl: ", key, ": a parameter is not (name, type, value)");
    const std::string name = t[0].cast<std::string>(), type = t[1].cast<std::string>();
    if (type == "u32")
      p.u32(name, t[2].cast<uint32_t>());
    else if (type == "i32")
      p.i32(name, t[2].cast<int32_t>());
    else if (type == "f32")
      p.f32(name, t[2].cast<float>());
    else if (type == "u32s" || type == "i32s" || type == "f32s") {
      std::vector<uint32_t> w;
      for (const auto& v : t[2].cast<py::list>()) {
        if (type == "f32s") {
          const float f = v.cast<float>();
          uint32_t u;
          std::memcpy(&u, &f, 4);
          w.push_back(u);
        } else {
          w.push_back(type == "i32s" ? uint32_t(v.cast<int32_t>()) : v.cast<uint32_t>());
        }
      }
      p.array(name, w.data(), w.size(),
              type == "u32s"   ? kernel::Params::Type::U32S
              : type == "i32s" ? kernel::Params::Type::I32S
                               : kernel::Params::Type::F32S);
    } else {
      TORCH_CHECK(false, "webgpu: _launch_wgsl: ", key, ": parameter '", name, "' has unknown type '", type, "'");
    }
  }
  // index_error_op: bind the Stream's index-error slot (as Kernel::error_flag does); the body reads
  // the op's code as P.err_op and reports through report_index_error(P.err_op, dim, idx, size).
  const bool error_flag = !index_error_op.empty();
  if (error_flag) p.u32("err_op", rt::Stream::error_op_code(index_error_op, true));
  kernel::Source src;
  src.directives = directives;
  src.libraries = libraries;
  kernel::launch("wgsl:" + key + (error_flag ? "|E" : ""), storage, p, groups, [&] { return body; }, src, error_flag);
}

// A dict of named counters.
py::dict counter_dict(std::initializer_list<std::pair<const char*, uint64_t>> counters) {
  py::dict d;
  for (const auto& [name, value] : counters) d[name] = value;
  return d;
}

// torch.cuda.memory_stats()'s flat keys ("allocated_bytes.all.current", ...) from the statistics
// the allocator gives torch.accelerator (core::device_stats), and the pool's own counters under their
// names (cache_hits).
py::dict memory_stats(int index) {
  const int dev = resolve(index);
  const c10::CachingDeviceAllocator::DeviceStats s = core::device_stats(dev);
  using Arr = c10::CachingDeviceAllocator::StatArray;
  const std::pair<const char*, const Arr*> arrays[] = {{"allocation", &s.allocation},
                                                       {"segment", &s.segment},
                                                       {"active", &s.active},
                                                       {"inactive_split", &s.inactive_split},
                                                       {"allocated_bytes", &s.allocated_bytes},
                                                       {"reserved_bytes", &s.reserved_bytes},
                                                       {"active_bytes", &s.active_bytes},
                                                       {"inactive_split_bytes", &s.inactive_split_bytes},
                                                       {"requested_bytes", &s.requested_bytes}};
  const char* kinds[] = {"all", "small_pool", "large_pool"};  // c10's StatType order
  py::dict d;
  for (const auto& [name, a] : arrays)
    for (size_t k = 0; k < 3; ++k) {
      const auto& st = (*a)[k];
      const std::string key = std::string(name) + "." + kinds[k] + ".";
      d[py::str(key + "current")] = st.current;
      d[py::str(key + "peak")] = st.peak;
      d[py::str(key + "allocated")] = st.allocated;
      d[py::str(key + "freed")] = st.freed;
    }
  d["num_alloc_retries"] = s.num_alloc_retries;
  d["num_ooms"] = s.num_ooms;
  d["num_device_alloc"] = s.num_device_alloc;
  d["num_device_free"] = s.num_device_free;
  d["num_sync_all_streams"] = s.num_sync_all_streams;
  d["cache_hits"] = rt::get_device(dev).pool().stats().cache_hits;
  return d;
}

py::dict stream_counters(int index) {
  auto& dev = rt::get_device(resolve(index));
  auto c = dev.stream().counters();
  auto p = dev.pipelines().counters();
  return counter_dict({{"submits", c.submits},
                       {"waits", c.waits},
                       {"dispatches", c.dispatches},
                       {"copies", c.copies},
                       {"uploads", c.uploads},
                       {"readbacks", c.readbacks},
                       {"readback_bytes", c.readback_bytes},
                       {"readback_wait_ns", c.readback_wait_ns},
                       {"readback_copy_ns", c.readback_copy_ns},
                       {"bind_groups_created", c.bind_groups_created},
                       {"bind_group_hits", c.bind_group_hits},
                       {"dispatch_ns", c.dispatch_ns},
                       {"bind_group_ns", c.bind_group_ns},
                       {"submit_ns", c.submit_ns},
                       {"host_wait_ns", rt::host_wait_ns()},
                       {"pipeline_compiles", p.compiles},
                       {"pipeline_hits", p.hits}});
}

py::dict info(int index) {
  auto& dev = rt::get_device(resolve(index));
  py::dict d;
  for (auto& [k, v] : dev.info()) d[py::str(k)] = v;
  py::dict lim;
  for (auto& [k, v] : dev.limit_map()) lim[py::str(k)] = v;
  d["limits"] = lim;
  d["features"] = dev.feature_names();
  d["subgroup_min_size"] = dev.subgroup_min_size();
  d["subgroup_max_size"] = dev.subgroup_max_size();
  d["memory_bytes"] = dev.memory_bytes();  // 0: not reported
  py::list configs;
  for (const auto& c : dev.matrix_configs()) {
    py::dict e;
    e["component"] = c.component;
    e["result"] = c.result;
    e["M"] = c.M, e["N"] = c.N, e["K"] = c.K;
    e["min_subgroup_size"] = c.min_subgroup;
    e["max_subgroup_size"] = c.max_subgroup;
    configs.append(e);
  }
  d["subgroup_matrix_configs"] = configs;
  d["dawn_device_toggles"] = dev.device_toggles();
  d["dawn"] = rt::dawn_source();
  d["device_index"] = dev.index();
  return d;
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  if (const char* t = std::getenv("TORCH_WEBGPU_SEGV_TRACE"); t && *t == '1') {
    signal(SIGSEGV, segv_handler);
    signal(SIGABRT, segv_handler);
  }
  m.doc() = "torch-webgpu native module";
  rt::Stream::set_park_probe([]() { return !PyGILState_Check(); });
  m.def("_dawn_proc_names", &rt::proc_names);
  m.def("_set_dawn_procs", &rt::set_dawn_procs);
  m.def("_load_dawn", []() { rt::procs(); });
  m.def("_has_kernel_profiler", &core::has_kernel_profiler);
  m.def("_shutdown", &rt::shutdown, py::call_guard<py::gil_scoped_release>());
  m.def(
      "_is_available",
      []() {
        core::check_not_forked();
        return rt::is_available();
      },
      py::call_guard<py::gil_scoped_release>());
  m.def(
      "_device_count",
      []() {
        core::check_not_forked();
        return rt::device_count();
      },
      py::call_guard<py::gil_scoped_release>());
  m.def("_current_device", &core::current_device);
  m.def("_devices_created", []() { return rt::created_devices().size(); });
  m.def("_set_bad_fork", &core::set_bad_fork);
  m.def("_in_bad_fork", []() { return core::g_bad_fork.load(); });
  m.def("_set_device", &core::set_current_device);
  m.def("_is_initialized", []() { return !rt::created_devices().empty(); });
  m.def(
      "_init", [](int i) { rt::get_device(resolve(i)); }, py::arg("index") = -1,
      py::call_guard<py::gil_scoped_release>());
  m.def(
      "_synchronize", [](int i) { rt::get_device(resolve(i)).stream().synchronize(); }, py::arg("index") = -1,
      py::call_guard<py::gil_scoped_release>());
  m.def("_flush", [](int i) { rt::get_device(resolve(i)).stream().flush(); }, py::arg("index") = -1);
  m.def("_memory_stats", &memory_stats, py::arg("index") = -1);
  m.def(
      "_reset_peak_memory_stats", [](int i) { rt::get_device(resolve(i)).pool().reset_peak(); }, py::arg("index") = -1);
  m.def(
      "_reset_accumulated_memory_stats", [](int i) { rt::get_device(resolve(i)).pool().reset_accumulated(); },
      py::arg("index") = -1);
  m.def("_empty_cache", &core::empty_caches);
  m.def("_mem_get_info", [](int i) { return core::memory_info(resolve(i)); }, py::arg("index") = -1);
  m.def("_stream_counters", &stream_counters, py::arg("index") = -1);
  // Host memory as a device buffer (core::import_host), for torch_webgpu/distributed.py.
  m.def(
      "_host_import_alignment", [](int i) { return rt::get_device(resolve(i)).host_import_alignment(); },
      py::arg("index") = -1);
  m.def("_import_host", &core::import_host, py::arg("host"), py::arg("index") = -1);
  // A device -> host copy in steps (runtime/stream.h, AsyncRead), for torch_webgpu/distributed.py.
  py::class_<rt::AsyncRead, std::shared_ptr<rt::AsyncRead>>(m, "_AsyncRead")
      .def(py::init<>())
      .def("start", [](rt::AsyncRead& a, const at::Tensor& t) { kernel::read_start(a, t); })
      .def("ready", [](rt::AsyncRead& a) { return kernel::read_ready(a); })
      .def(
          "finish", [](rt::AsyncRead& a, const at::Tensor& out) { kernel::read_finish(a, out); },
          py::call_guard<py::gil_scoped_release>());
  py::class_<rt::AsyncWrite, std::shared_ptr<rt::AsyncWrite>>(m, "_AsyncWrite")
      .def(py::init<>())
      .def(
          "upload",
          [](rt::AsyncWrite& w, const at::Tensor& dst, const at::Tensor& src) { kernel::write_with(w, dst, src); },
          py::call_guard<py::gil_scoped_release>());
  // Device-side index errors (runtime/stream.h): armed slots, errors found and not raised yet,
  // tainted buffers. For tests.
  m.def(
      "_device_error_state",
      [](int i) {
        auto e = rt::get_device(resolve(i)).stream().error_state();
        py::dict d;
        d["armed"] = e.armed;
        d["found"] = e.found;
        d["tainted"] = e.tainted;
        return d;
      },
      py::arg("index") = -1);
  m.def(
      "_reset_stream_counters", [](int i) { rt::get_device(resolve(i)).stream().reset_counters(); },
      py::arg("index") = -1);
  // Per-dispatch GPU times without torch.profiler (which needs torch >= 2.12 for PrivateUse1):
  // benchmarks/profile_step.py on older torch.
  m.def(
      "_kernel_timing", [](bool on) { rt::set_kernel_timing(on); },
      "Turns per-dispatch GPU timestamps on or off (needs the adapter's timestamp-query).");
  m.def(
      "_take_kernel_times",
      [](int index) {
        py::list out;
        for (const rt::KernelTime& t : rt::get_device(resolve(index)).stream().take_kernel_times())
          out.append(py::make_tuple(t.name, t.end_ns - t.begin_ns));
        return out;
      },
      py::arg("index") = -1,
      "The (kernel key, GPU ns) of every dispatch timed since the last call (waits for the device).");
  m.def(
      "_pipeline_keys", [](int index) { return rt::get_device(resolve(index)).pipelines().keys(); },
      "The keys of the kernels compiled so far on a device (which kernel variants ran).");
  // Subgroup-matrix configs as info() lists them.
  auto matrix_configs = [](const py::list& configs) {
    std::vector<kernel::MatrixConfig> cs;
    for (const auto& item : configs) {
      const py::dict c = item.cast<py::dict>();
      cs.push_back({c["component"].cast<std::string>(), c["result"].cast<std::string>(), c["M"].cast<uint32_t>(),
                    c["N"].cast<uint32_t>(), c["K"].cast<uint32_t>(), c["min_subgroup_size"].cast<uint32_t>(),
                    c["max_subgroup_size"].cast<uint32_t>()});
    }
    return cs;
  };
  m.def(
      "_sg_gemm_plan",
      [matrix_configs](const py::list& configs, bool has_f16, uint64_t wg_storage, uint64_t max_invocations,
                       py::object dtype, int64_t batch, int64_t M, int64_t N, int64_t K) {
        const auto st = reinterpret_cast<THPDtype*>(dtype.ptr())->scalar_type;
        return engines::describe_sg_gemm_plan(matrix_configs(configs), has_f16, wg_storage, max_invocations, st, batch,
                                              M, N, K);
      },
      "The half-GEMM plan (subgroup matrices or not) for an adapter described by its subgroup-matrix configs "
      "(as in info()) and limits.");
  m.def(
      "_to_positions_channels", [](const at::Tensor& x) { return ops::to_positions_channels(x); },
      "A 16-bit [N, C, positions...] tensor as [N, positions, C] (the half convolution's channels-last input).");
  m.def("_launch_wgsl", &launch_wgsl, py::arg("key"), py::arg("body"), py::arg("args"), py::arg("params"),
        py::arg("groups"), py::arg("directives") = "", py::arg("libraries") = std::vector<std::string>{},
        py::arg("index_error_op") = "",
        "One dispatch of a WGSL body (generated kernels, probes); see launch_wgsl in module.cpp. index_error_op: "
        "the op named by IndexError when the body calls report_index_error(P.err_op, dim, idx, size).");
  m.def("_info", &info, py::arg("index") = -1);
  // sizeof of every Dawn struct as this build sees it, to compare with the installed wgpudawn.
  m.def("_abi_struct_sizes", []() {
    py::dict d;
#define WEBGPU_ABI_SIZE(name) d[#name] = sizeof(name);
    WGPU_ABI_STRUCTS(WEBGPU_ABI_SIZE)
#undef WEBGPU_ABI_SIZE
    return d;
  });
  m.def(
      "_default_generator",
      [](int i) {
        return py::reinterpret_steal<py::object>(
            THPGenerator_initDefaultGenerator(core::default_generator(resolve(i))));
      },
      py::arg("index") = -1);
}
