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
#include <string_view>

namespace webgpu::kernel {

// Words of the per-dispatch parameter slot (runtime/pipeline.h: kParamBytes / 4).
constexpr uint32_t kMaxParamWords = 64;

// Lives on the stack of every dispatch: fixed storage, no allocation.
class Params {
 public:
  enum class Type : uint8_t { U32, I32, F32, I64, U32S, I32S, F32S };
  static constexpr size_t kMaxFields = 32, kMaxName = 23;

  void u32(std::string_view name, uint32_t v) { scalar(name, Type::U32, v); }
  void i32(std::string_view name, int32_t v) { scalar(name, Type::I32, uint32_t(v)); }
  void f32(std::string_view name, float v);
  void i64(std::string_view name, int64_t v);
  // An array of words; `type` is U32S, I32S or F32S (the accessor's result type).
  void array(std::string_view name, const uint32_t* v, size_t n, Type type = Type::U32S);

  bool empty() const { return nfields_ == 0; }
  const uint32_t* words() const { return words_; }
  uint32_t num_words() const { return nwords_; }
  // Identifies the names and types (not the values): part of the pipeline key.
  uint64_t layout_hash() const { return hash_; }
  // The struct, the uniform binding (group 1, binding 0) and the array accessors.
  std::string wgsl() const;
  // Raises if the source reads a parameter that is not set, or one is set that it never reads
  // (P.<name>, P_<name>(...)).
  void check_used(const std::string& source, const std::string& kernel) const;

 private:
  struct Field {
    char name[kMaxName + 1];
    Type type;
    uint32_t word, count;  // count: words (arrays: padded to a multiple of 4)
  };
  Field& add(std::string_view name, Type t, uint32_t count);
  void scalar(std::string_view name, Type t, uint32_t v);
  void align(uint32_t words);
  void push(uint32_t v);

  Field fields_[kMaxFields];
  uint32_t words_[kMaxParamWords];
  uint32_t nfields_ = 0, nwords_ = 0;
  uint64_t hash_ = 1469598103934665603ull;
};

}  // namespace webgpu::kernel
