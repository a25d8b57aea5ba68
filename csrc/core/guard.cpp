// DeviceGuardImpl for webgpu: a thread-local current device and one default stream per device.
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "core/core.h"
#include "runtime/device.h"
#include "runtime/stream.h"

namespace webgpu::core {
namespace {
thread_local int t_current = 0;
}

int current_device() { return t_current; }
void set_current_device(int index) {
  TORCH_CHECK(index >= 0 && index < std::max(1, rt::device_count()), "webgpu: invalid device index ", index,
              " (", rt::device_count(), " webgpu device(s) available)");
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
  c10::Stream getStream(c10::Device d) const override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream getDefaultStream(c10::Device d) const override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream exchangeStream(c10::Stream s) const override { return c10::Stream(c10::Stream::DEFAULT, s.device()); }
  c10::DeviceIndex deviceCount() const noexcept override { return c10::DeviceIndex(rt::device_count()); }
  // One in-order queue per device: events are trivially satisfied in order.
  void record(void**, const c10::Stream&, const c10::DeviceIndex, const c10::EventFlag) const override {}
  void block(void*, const c10::Stream&) const override {}
  bool queryEvent(void*) const override { return true; }
  void destroyEvent(void*, const c10::DeviceIndex) const noexcept override {}
  bool queryStream(const c10::Stream&) const override { return false; }
  void synchronizeStream(const c10::Stream& s) const override {
    check_not_forked();
    rt::get_device(s.device_index() < 0 ? 0 : s.device_index()).stream().synchronize();
  }
  void synchronizeDevice(const c10::DeviceIndex i) const override {
    check_not_forked();
    rt::get_device(i < 0 ? t_current : i).stream().synchronize();
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, WebGPUGuardImpl);

}  // namespace webgpu::core
