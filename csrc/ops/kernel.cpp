// The launch side of ops/kernel.h: binding plan (operands sharing a block share a binding), typed
// accessors, pipeline lookup and one dispatch.
#include "ops/kernel.h"

#include <cstring>
#include <sstream>

#include "ops/common.h"
#include "runtime/pipeline.h"

namespace webgpu::ops {

std::string wgsl_value_type(CT ct, at::ScalarType dtype) {
  if (ct == CT::RAW) return c10::elementSize(dtype) == 8 ? "vec2<u32>" : "u32";
  return wgsl_type(ct);
}

void Kernel::param_f32(float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  params_.push_back(b);
}

void Kernel::param_i64(int64_t v) {
  params_.push_back(uint32_t(uint64_t(v)));
  params_.push_back(uint32_t(uint64_t(v) >> 32));
}

void Kernel::param_index(int64_t v, const char* what) {
  TORCH_CHECK(v >= 0 && v <= int64_t(UINT32_MAX), "webgpu: ", key_, ": ", what, " (", v,
              ") does not fit the 32-bit indexing of webgpu kernels");
  params_.push_back(uint32_t(v));
}

uint32_t Kernel::error_flag(const std::string& op, bool index_error) {
  error_flag_ = true;
  return rt::Stream::error_op_code(op, index_error);
}

// The op's name: the key up to its first specialisation separator.
std::string Kernel::op_name() const { return key_.substr(0, key_.find_first_of(":|")); }

int Kernel::add(const at::TensorBase& t, CT ct, bool write) {
  if (t.device().type() != c10::DeviceType::PrivateUse1) raise_wrong_device(t, op_name().c_str());
  if (!args_.empty())
    TORCH_CHECK(t.device() == args_[0].t.device(), "Expected all tensors to be on the same device, but found ",
                args_[0].t.device(), " and ", t.device(), " (webgpu op ", op_name(), ")");
  check_supported_dtype(t.scalar_type(), key_.c_str());
  args_.push_back({t, ct, write});
  return int(args_.size()) - 1;
}

void Kernel::launch(uint64_t workgroups, const std::function<std::string()>& body) {
  TORCH_CHECK(!args_.empty(), "webgpu: internal: kernel ", key_, " has no tensor operand");
  TORCH_CHECK(params_.size() <= rt::kParamWords, "webgpu: internal: kernel ", key_, " has ", params_.size(),
              " parameter words (at most ", rt::kParamWords, ")");
  if (workgroups == 0) return;
  // Binding plan: one binding per distinct block.
  struct Bind {
    rt::Block* block;
    bool write = false, atomic = false;
  };
  std::vector<Bind> binds;
  std::string key = key_;
  bool needs_i64 = false;
  for (Arg& a : args_) {
    rt::Block* b = block_of(a.t);
    TORCH_CHECK(b != nullptr, "webgpu: ", key_, ": an operand has no storage");
    int k = -1;
    for (size_t j = 0; j < binds.size(); ++j)
      if (binds[j].block == b) k = int(j);
    if (k < 0) {
      binds.push_back({b});
      k = int(binds.size()) - 1;
    }
    a.binding = k;
    binds[k].write |= a.write;
    binds[k].atomic |= a.write && (a.t.element_size() < 4 || a.atomic);
    needs_i64 |= a.t.scalar_type() == at::kLong || a.ct == CT::I64;
    key += "|" + std::string(dtype_tag(a.t.scalar_type())) + ":" + std::to_string(int(a.ct)) + ":" +
           std::to_string(k) + (a.write ? "w" : "r");
  }
  for (const Bind& b : binds) key += b.atomic ? "A" : "-";
  if (error_flag_) key += "|E";
  uint32_t ro_mask = 0;
  for (size_t j = 0; j < binds.size(); ++j)
    if (!binds[j].write) ro_mask |= 1u << j;

  rt::GpuDevice& dev = gpu_of(args_[0].t);
  auto make = [&]() {
    std::ostringstream s;
    s << rt::wgsl_source("common");
    if (needs_i64) s << rt::wgsl_source("int64");
    for (size_t j = 0; j < binds.size(); ++j)
      s << "@group(0) @binding(" << j + 1 << ") var<storage, " << (binds[j].write ? "read_write" : "read")
        << "> b" << j + 1 << ": array<" << (binds[j].atomic ? "atomic<u32>" : "u32") << ">;\n";
    for (size_t i = 0; i < args_.size(); ++i) {
      const Arg& a = args_[i];
      const std::string B = "b" + std::to_string(a.binding + 1), I = std::to_string(i);
      const bool atomic = binds[a.binding].atomic;
      const at::ScalarType dt = a.t.scalar_type();
      const int64_t isz = a.t.element_size();
      const std::string T = wgsl_value_type(a.ct, dt);
      s << "fn wd" << I << "(w: u32) -> u32 { return " << (atomic ? "atomicLoad(&" + B + "[w])" : B + "[w]") << "; }\n";
      s << "fn ld" << I << "(e: u32) -> " << T << " { let r = " << raw_load(isz, "wd" + I) << "; "
        << (a.ct == CT::RAW ? "return r; }\n" : "let v = " + convert_in(dt, a.ct) + "; return v; }\n");
      if (!a.write) continue;
      if (atomic)
        s << "fn cas" << I << "(w: u32, o: u32, n: u32) -> bool { return atomicCompareExchangeWeak(&" << B
          << "[w], o, n).exchanged; }\n"
          << "fn aadd" << I << "(w: u32, v: u32) -> u32 { return atomicAdd(&" << B << "[w], v); }\n";
      s << "fn wr" << I << "(w: u32, v: u32) { " << (atomic ? "atomicStore(&" + B + "[w], v);" : B + "[w] = v;")
        << " }\n";
      const std::string bits = a.ct == CT::RAW ? "v" : convert_out(dt, a.ct);
      s << "fn st" << I << "(e: u32, v: " << T << ") { let r = " << bits << "; ";
      if (isz == 8) {
        s << "wr" << I << "(2u * e, r.x); wr" << I << "(2u * e + 1u, r.y); }\n";
      } else if (isz == 4) {
        s << "wr" << I << "(e, r); }\n";
      } else {
        const std::string per = isz == 1 ? "4u" : "2u", width = isz == 1 ? "8u" : "16u",
                          mask = isz == 1 ? "0xffu" : "0xffffu";
        s << "let w = e / " << per << "; let sh = (e % " << per << ") * " << width << "; "
          << "atomicAnd(&" << B << "[w], ~(" << mask << " << sh)); atomicOr(&" << B << "[w], (r & " << mask
          << ") << sh); }\n";
      }
    }
    if (error_flag_) {
      s << "@group(0) @binding(" << binds.size() + 1 << ") var<storage, read_write> werr: array<atomic<u32>, "
        << rt::Stream::kErrorWords << ">;\n"
        << "fn report_index_error(op: u32, dim: u32, idx: vec2<u32>, size: u32) {\n"
        << "  if (atomicExchange(&werr[0], 1u) == 0u) {\n"
        << "    atomicStore(&werr[1], op); atomicStore(&werr[2], dim); atomicStore(&werr[3], idx.x);\n"
        << "    atomicStore(&werr[4], idx.y); atomicStore(&werr[5], size); atomicStore(&werr[6], 0u);\n  }\n}\n";
    }
    s << body();
    return s.str();
  };
  const uint32_t nb = uint32_t(binds.size()) + (error_flag_ ? 1 : 0);
  const rt::Pipeline& p = dev.pipelines().get(key, nb, ro_mask, make);
  std::vector<rt::Binding> b;
  b.reserve(nb);
  for (const Bind& x : binds) b.push_back({x.block->buffer.get(), 0, x.block->size});
  // A checking kernel's error slot is bound by the Stream (binding nb), which also records which
  // blocks the dispatch writes (they hold a poisoned result if the slot is found set).
  dev.stream().dispatch(p, b.data(), uint32_t(b.size()), params_.data(), uint32_t(params_.size()), workgroups,
                        error_flag_);
}

}  // namespace webgpu::ops
