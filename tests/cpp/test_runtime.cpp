// Runtime unit tests: the caching allocator, Stream ordering (the queue-write trap), batching,
// the pipeline cache and WGSL compile errors.
#include <cstring>
#include <vector>

#include <c10/util/Exception.h>

#include "harness.h"
#include "runtime/allocator.h"
#include "runtime/device.h"
#include "runtime/pipeline.h"
#include "runtime/stream.h"

using namespace webgpu::rt;

namespace {
// The parameter slot as the runtime binds it (group 1, binding 0), read by word index: these tests
// drive the runtime below the kernel layer, which names parameters (kernel/params.h).
const char* kParamSlot =
    "struct Params { p: array<vec4<u32>, 16>, };\n@group(1) @binding(0) var<uniform> P: Params;\n"
    "fn prm(i: u32) -> u32 { return P.p[i >> 2u][i & 3u]; }\n";
}  // namespace

TEST(allocator_reuses_and_counts_exactly) {
  auto& pool = get_device(0).pool();
  auto live = [&] { return pool.stats().allocated_bytes[kAllBlocks].current; };
  auto reserved = [&] { return pool.stats().reserved_bytes[kAllBlocks].current; };
  const auto s0 = pool.stats();
  Block* a = pool.allocate(1000);
  EXPECT(a->size >= 1000 && a->size % 4 == 0);
  EXPECT(live() == s0.allocated_bytes[kAllBlocks].current + int64_t(a->size));
  EXPECT(pool.stats().allocation[kSmallBlocks].current == s0.allocation[kSmallBlocks].current + 1);
  pool.free(a);
  EXPECT(live() == s0.allocated_bytes[kAllBlocks].current);
  const auto s1 = pool.stats();
  EXPECT(s1.allocated_bytes[kAllBlocks].freed == s0.allocated_bytes[kAllBlocks].freed + int64_t(a->size));
  Block* b = pool.allocate(900);  // same size class: a cached block comes back, no new buffer
  EXPECT(b->size == a->size || b->size >= 900);
  EXPECT(pool.stats().cache_hits == s1.cache_hits + 1);
  EXPECT(reserved() == s1.reserved_bytes[kAllBlocks].current);
  EXPECT(pool.stats().segment[kAllBlocks].current == s1.segment[kAllBlocks].current);
  pool.free(b);
  pool.empty_cache();
  EXPECT(reserved() < s1.reserved_bytes[kAllBlocks].current);  // a, cached, was released
  EXPECT(pool.stats().segment[kAllBlocks].freed >= 1);
  pool.reset_accumulated();
  EXPECT(pool.stats().allocated_bytes[kAllBlocks].allocated == 0 && pool.stats().cache_hits == 0);
}

TEST(allocator_oom_is_out_of_memory_error) {
  auto& pool = get_device(0).pool();
  bool oom = false;
  try {
    pool.allocate(uint64_t(1) << 42);
  } catch (const c10::OutOfMemoryError& e) {
    oom = std::string(e.what()).find("out of memory") != std::string::npos;
  }
  EXPECT(oom);
  Block* b = pool.allocate(64);
  EXPECT(b != nullptr);
  pool.free(b);
}

// A kernel that writes dst[i] = src[i] * 2 + 1 (u32), through the same binding shape as every kernel.
static const Pipeline& doubler(GpuDevice& dev) {
  return dev.pipelines().get("test:doubler", 2, 0b01, [] {
    return wgsl_source("common") + kParamSlot +
           "@group(0) @binding(1) var<storage, read> src: array<u32>;\n"
           "@group(0) @binding(2) var<storage, read_write> dst: array<u32>;\n"
           "@compute @workgroup_size(64) fn main(@builtin(workgroup_id) wid: vec3<u32>,\n"
           "  @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {\n"
           "  let i = linear_id(wid, nwg, lid, 64u); if (i >= prm(0u)) { return; }\n"
           "  dst[i] = src[i] * 2u + prm(1u); }\n";
  });
}

TEST(stream_host_write_does_not_overtake_recorded_work) {
  auto& dev = get_device(0);
  auto& s = dev.stream();
  const uint32_t n = 1000;
  Block* a = dev.pool().allocate(n * 4);
  Block* b = dev.pool().allocate(n * 4);
  std::vector<uint32_t> ones(n, 1), twos(n, 2), out(n);
  s.write(a->buffer.get(), 0, ones.data(), n * 4);
  const Pipeline& p = doubler(dev);
  Binding binds[2] = {{a->buffer.get(), 0, a->size}, {b->buffer.get(), 0, b->size}};
  uint32_t params[2] = {n, 1};
  s.dispatch(p, binds, 2, params, 2, (n + 63) / 64);  // recorded, not yet submitted
  s.write(a->buffer.get(), 0, twos.data(), n * 4);  // must land after the dispatch read `a`
  s.read(b->buffer.get(), 0, out.data(), n * 4);
  EXPECT(out[0] == 3 && out[n - 1] == 3);
  s.read(a->buffer.get(), 0, out.data(), n * 4);
  EXPECT(out[0] == 2 && out[n - 1] == 2);
  dev.pool().free(a);
  dev.pool().free(b);
}

TEST(stream_batches_dispatches_and_folds_grids) {
  auto& dev = get_device(0);
  auto& s = dev.stream();
  s.synchronize();
  const auto c0 = s.counters();
  const uint32_t n = 64;
  Block* a = dev.pool().allocate(n * 4);
  Block* b = dev.pool().allocate(n * 4);
  std::vector<uint32_t> zeros(n, 0), out(n);
  s.write(a->buffer.get(), 0, zeros.data(), n * 4);
  const Pipeline& p = doubler(dev);
  Binding ab[2] = {{a->buffer.get(), 0, a->size}, {b->buffer.get(), 0, b->size}};
  Binding ba[2] = {{b->buffer.get(), 0, b->size}, {a->buffer.get(), 0, a->size}};
  uint32_t params[2] = {n, 1};
  for (int i = 0; i < 300; ++i) s.dispatch(p, i % 2 ? ba : ab, 2, params, 2, 1);  // x -> 2x+1, 300 times
  const auto c1 = s.counters();
  EXPECT(c1.dispatches - c0.dispatches == 300);
  EXPECT(c1.waits == c0.waits);
  EXPECT(c1.submits - c0.submits <= 1);
  EXPECT(c1.bind_groups_created - c0.bind_groups_created <= 4);
  s.read(b->buffer.get(), 0, out.data(), n * 4);  // 300 iterations, last one writes a
  s.read(a->buffer.get(), 0, out.data(), n * 4);
  uint32_t expect = 0;
  for (int i = 0; i < 300; ++i) expect = expect * 2 + 1;
  EXPECT(out[5] == expect);
  // A dispatch wider than 65535 workgroups folds into a 2D grid and still covers every element.
  const uint32_t big = 64 * 70000;
  Block* x = dev.pool().allocate(uint64_t(big) * 4);
  Block* y = dev.pool().allocate(uint64_t(big) * 4);
  std::vector<uint32_t> host(big, 7), back(big);
  s.write(x->buffer.get(), 0, host.data(), uint64_t(big) * 4);
  Binding xy[2] = {{x->buffer.get(), 0, x->size}, {y->buffer.get(), 0, y->size}};
  uint32_t bp[2] = {big, 0};
  s.dispatch(p, xy, 2, bp, 2, big / 64);
  s.read(y->buffer.get(), 0, back.data(), uint64_t(big) * 4);
  EXPECT(back[0] == 14 && back[big / 2] == 14 && back[big - 1] == 14);
  for (Block* blk : {a, b, x, y}) dev.pool().free(blk);
}

TEST(pipeline_cache_compiles_once_and_reports_wgsl_errors) {
  auto& dev = get_device(0);
  const auto c0 = dev.pipelines().counters();
  doubler(dev);
  doubler(dev);
  const auto c1 = dev.pipelines().counters();
  EXPECT(c1.compiles - c0.compiles <= 1);
  EXPECT(c1.hits - c0.hits >= 1);
  EXPECT_THROWS(dev.pipelines().get("test:broken", 1, 0,
                                    [] {
                                      return wgsl_source("common") + kParamSlot +
                                             "@group(0) @binding(1) var<storage, read_write> d: array<u32>;\n"
                                             "@compute @workgroup_size(1) fn main() { d[0] = undefined_thing; }\n";
                                    }),
                "undefined_thing");
  // The device is still usable after a compile error.
  doubler(dev);
}

TEST(unaligned_reads_return_the_right_bytes) {
  auto& dev = get_device(0);
  Block* a = dev.pool().allocate(64);
  std::vector<uint8_t> bytes(64);
  for (int i = 0; i < 64; ++i) bytes[i] = uint8_t(i * 3);
  dev.stream().write(a->buffer.get(), 0, bytes.data(), 64);
  uint8_t out[5];
  dev.stream().read(a->buffer.get(), 13, out, 5);
  EXPECT(out[0] == 39 && out[4] == 51);
  dev.pool().free(a);
}
