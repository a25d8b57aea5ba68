// Named kernel parameters (docs/design.md, "Kernel parameters"). A launch adds each parameter by
// name; the layer generates the WGSL struct that the kernel reads them from, so WGSL says
// `P.out_off` (arrays: `P_sizes(d)`) and never a word index:
//
//   k.param("n", uint32_t(n));            // WGSL: P.n      (u32)
//   k.param_f32("alpha", alpha);          // WGSL: P.alpha  (f32)
//   k.param_i64("lo", v);                 // WGSL: P.lo     (vec2<u32>: low word, high word)
//   k.param_array("sizes", words);        // WGSL: P_sizes(d) -> u32
//
// A name the WGSL reads but the launch did not add fails to compile; a name the launch adds but the
// WGSL never reads fails at pipeline build too ("unused kernel parameter"). Both raise RuntimeError
// naming the kernel.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace webgpu::kernel {

// Words of the per-dispatch parameter slot (runtime/pipeline.h: kParamBytes / 4).
constexpr uint32_t kMaxParamWords = 64;

class Params {
 public:
  enum class Type : uint8_t { U32, I32, F32, I64, U32S, I32S, F32S };

  void u32(std::string name, uint32_t v) { scalar(std::move(name), Type::U32, v); }
  void i32(std::string name, int32_t v) { scalar(std::move(name), Type::I32, uint32_t(v)); }
  void f32(std::string name, float v);
  void i64(std::string name, int64_t v);
  // An array of words; `type` is U32S, I32S or F32S (the accessor's result type).
  void array(std::string name, const uint32_t* v, size_t n, Type type = Type::U32S);

  bool empty() const { return fields_.empty(); }
  const std::vector<uint32_t>& words() const { return words_; }
  // Identifies the names and types (not the values): part of the pipeline key.
  uint64_t layout_hash() const { return hash_; }
  // The struct, the uniform binding (group 1, binding 0) and the array accessors.
  std::string wgsl() const;
  // Raises if a parameter is never read by `source` (P.<name> or P_<name>(...)).
  void check_used(const std::string& source, const std::string& kernel) const;

 private:
  struct Field {
    std::string name;
    Type type;
    uint32_t word, count;  // count: words (arrays: padded to a multiple of 4)
  };
  void scalar(std::string name, Type t, uint32_t v);
  void align(uint32_t words);
  void mix(const std::string& name, Type t, uint32_t count);

  std::vector<Field> fields_;
  std::vector<uint32_t> words_;
  uint64_t hash_ = 1469598103934665603ull;
};

}  // namespace webgpu::kernel
