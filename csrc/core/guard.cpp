// DeviceGuardImpl for webgpu: a thread-local current device, and streams and events over each
// device's one in-order Stream (runtime/stream.h).
//
// Streams: every device has a single queue, so all webgpu streams of a device are one stream.
// torch.Stream(device="webgpu") hands out new ids (so streams stay distinct objects that compare
// as PyTorch expects), but every id aliases the device's Stream: work on any of them runs in
// recording order, and waiting for one waits for all. Events are points in that Stream's
// submission sequence (record submits the open batch; a Dawn work-done future completes the event)
// and, for enable_timing events, GPU timestamps written by an empty pass, which elapsed_time reads.
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <array>
#include <atomic>
#include <memory>

#include "core/core.h"
#include "kernel/dtype.h"
#include "ops/common.h"
#include "runtime/device.h"
#include "runtime/stream.h"

namespace webgpu::core {
namespace {
thread_local int t_current = 0;
// The current stream id per device, per thread (0: the default stream).
thread_local std::array<c10::StreamId, rt::kMaxDevices> t_streams{};
std::atomic<c10::StreamId> g_next_stream{1};

struct Event {
  int device = 0;
  bool timed = false;
  std::shared_ptr<rt::Stream::Mark> mark;
};

int resolve(c10::DeviceIndex i) { return i < 0 ? t_current : int(i); }
}  // namespace

int current_device() { return t_current; }
void set_current_device(int index) {
  TORCH_CHECK(index >= 0 && index < std::max(1, rt::device_count()), "webgpu: invalid device index ", index, " (",
              rt::device_count(), " webgpu device(s) available)");
  t_current = index;
}

struct WebGPUGuardImpl final : c10::impl::DeviceGuardImplInterface {
  static constexpr c10::DeviceType T = c10::DeviceType::PrivateUse1;
  c10::DeviceType type() const override { return T; }
  c10::Device exchangeDevice(c10::Device d) const override {
    c10::Device old(T, t_current);
    if (d.index() >= 0) set_current_device(d.index());
    return old;
  }
  c10::Device getDevice() const override { return c10::Device(T, t_current); }
  void setDevice(c10::Device d) const override {
    if (d.index() >= 0) set_current_device(d.index());
  }
  void uncheckedSetDevice(c10::Device d) const noexcept override {
    if (d.index() >= 0) t_current = d.index();
  }
  static c10::Device full(c10::Device d) { return c10::Device(T, c10::DeviceIndex(resolve(d.index()))); }
  c10::Stream getStream(c10::Device d) const override {
    d = full(d);
    return c10::Stream(c10::Stream::UNSAFE, d, t_streams[d.index()]);
  }
  c10::Stream getDefaultStream(c10::Device d) const override { return c10::Stream(c10::Stream::DEFAULT, full(d)); }
  c10::Stream getStreamFromGlobalPool(c10::Device d, bool) const override { return getNewStream(d, 0); }
  c10::Stream getNewStream(c10::Device d, int) const override {
    return c10::Stream(c10::Stream::UNSAFE, full(d), g_next_stream.fetch_add(1));
  }
  c10::Stream exchangeStream(c10::Stream s) const override {
    const c10::Device d = full(s.device());
    c10::Stream old(c10::Stream::UNSAFE, d, t_streams[d.index()]);
    t_streams[d.index()] = s.id();
    return old;
  }
  c10::DeviceIndex deviceCount() const noexcept override { return c10::DeviceIndex(rt::device_count()); }
#if __has_include(<c10/core/DeviceCapability.h>)
  // torch.accelerator.get_device_capability(): the dtypes a webgpu tensor can hold (float64 stored
  // and emulated; no complex128, complex32 or quantized types).
  c10::DeviceCapability getDeviceCapability(c10::Device) const override {
    c10::DeviceCapability cap;
    auto holds = [](c10::ScalarType t) { return ops::is_storable_dtype(t) || kernel::is_uint_fp8(t); };
    // (one bit per entry of this list, in its order: not ScalarType's numbering)
#define WEBGPU_SET_CAPABILITY(_1, n) cap.capability_data.supported_scalar_types.has_##n = holds(c10::ScalarType::n);
    AT_FORALL_SCALAR_TYPES_WITH_COMPLEX_AND_QINTS(WEBGPU_SET_CAPABILITY)
#undef WEBGPU_SET_CAPABILITY
    return cap;
  }
#endif

  void record(void** event, const c10::Stream& stream, const c10::DeviceIndex device_index,
              const c10::EventFlag flag) const override {
    const int dev = resolve(stream.device_index());
    TORCH_CHECK(device_index == -1 || device_index == dev, "webgpu: event device ", int(device_index),
                " does not match the recording stream's device ", dev);
    auto* e = static_cast<Event*>(*event);
    if (!e) {
      e = new Event();
      // torch.Event(enable_timing=True) asks for BACKEND_DEFAULT; timing costs a query set.
      e->timed = flag == c10::EventFlag::BACKEND_DEFAULT;
      *event = e;
    }
    e->device = dev;
    e->mark = rt::get_device(dev).stream().mark(e->timed);
  }
  // One in-order queue per device: work recorded after this call already runs after the event.
  void block(void* event, const c10::Stream& stream) const override {
    auto* e = static_cast<Event*>(event);
    if (e && e->mark && e->device != resolve(stream.device_index()))
      rt::get_device(e->device).stream().wait_mark(*e->mark);  // another device: wait on the host
  }
  bool queryEvent(void* event) const override {
    auto* e = static_cast<Event*>(event);
    return !e || !e->mark || rt::get_device(e->device).stream().mark_done(*e->mark);
  }
  void destroyEvent(void* event, const c10::DeviceIndex) const noexcept override { delete static_cast<Event*>(event); }
  void synchronizeEvent(void* event) const override {
    auto* e = static_cast<Event*>(event);
    if (e && e->mark) rt::get_device(e->device).stream().wait_mark(*e->mark);
  }
  double elapsedTime(void* a, void* b, const c10::DeviceIndex) const override {
    auto* e1 = static_cast<Event*>(a);
    auto* e2 = static_cast<Event*>(b);
    TORCH_CHECK(e1 && e2 && e1->mark && e2->mark, "webgpu: both events must be recorded before elapsed_time");
    TORCH_CHECK(e1->timed && e2->timed, "webgpu: both events must be created with enable_timing=True");
    TORCH_CHECK(e1->device == e2->device, "webgpu: elapsed_time needs events of one device");
    auto& s = rt::get_device(e1->device).stream();
    TORCH_CHECK(e1->mark->has_time && e2->mark->has_time,
                "webgpu: elapsed_time needs the adapter's timestamp-query feature, which this adapter lacks");
    const uint64_t t1 = s.timestamp_ns(*e1->mark), t2 = s.timestamp_ns(*e2->mark);
    return (double(t2) - double(t1)) / 1e6;
  }
  bool queryStream(const c10::Stream& s) const override {
    const int dev = resolve(s.device_index());
    if (rt::created_devices().empty()) return true;  // never used: nothing pending
    return rt::get_device(dev).stream().query();
  }
  void synchronizeStream(const c10::Stream& s) const override {
    check_not_forked();
    rt::get_device(resolve(s.device_index())).stream().synchronize();
  }
  void synchronizeDevice(const c10::DeviceIndex i) const override {
    check_not_forked();
    rt::get_device(resolve(i)).stream().synchronize();
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, WebGPUGuardImpl);

}  // namespace webgpu::core
