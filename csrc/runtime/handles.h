// Small RAII owners for Dawn handles: one reference each, released on destruction, so no handle
// leaks on an error path.
#pragma once
#include <utility>

#include "runtime/dawn.h"

namespace webgpu::rt {

template <class H, void (*AddRef)(H), void (*Release)(H)>
class Handle {
 public:
  Handle() = default;
  explicit Handle(H h) : h_(h) {}  // adopts a reference
  Handle(const Handle& o) : h_(o.h_) {
    if (h_) AddRef(h_);
  }
  Handle(Handle&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  Handle& operator=(Handle o) noexcept {
    std::swap(h_, o.h_);
    return *this;
  }
  ~Handle() {
    if (h_) Release(h_);
  }
  H get() const { return h_; }
  explicit operator bool() const { return h_ != nullptr; }
  H release() { return std::exchange(h_, nullptr); }

 private:
  H h_ = nullptr;
};

#define WEBGPU_HANDLE(Name)                                                     \
  inline void Name##AddRefFn(WGPU##Name h) { procs().wgpu##Name##AddRef(h); }   \
  inline void Name##ReleaseFn(WGPU##Name h) { procs().wgpu##Name##Release(h); } \
  using Name = Handle<WGPU##Name, Name##AddRefFn, Name##ReleaseFn>;

WEBGPU_HANDLE(Instance)
WEBGPU_HANDLE(Adapter)
WEBGPU_HANDLE(Device)
WEBGPU_HANDLE(Queue)
WEBGPU_HANDLE(Buffer)
WEBGPU_HANDLE(BindGroup)
WEBGPU_HANDLE(BindGroupLayout)
WEBGPU_HANDLE(PipelineLayout)
WEBGPU_HANDLE(ComputePipeline)
WEBGPU_HANDLE(ShaderModule)
WEBGPU_HANDLE(CommandEncoder)
WEBGPU_HANDLE(ComputePassEncoder)
WEBGPU_HANDLE(CommandBuffer)
WEBGPU_HANDLE(QuerySet)
#undef WEBGPU_HANDLE

}  // namespace webgpu::rt
