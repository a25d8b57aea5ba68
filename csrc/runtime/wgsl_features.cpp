// WGSL language features, asked of the one instance (wgpuInstanceHasWGSLLanguageFeature).
#include "runtime/wgsl_features.h"

#include "runtime/dawn.h"
#include "runtime/device.h"

namespace webgpu::rt {

bool wgsl_has_packed_dot4() {
  static const bool has = procs().wgpuInstanceHasWGSLLanguageFeature(
                              instance(), WGPUWGSLLanguageFeatureName_Packed4x8IntegerDotProduct) != 0;
  return has;
}

}  // namespace webgpu::rt
