// Runs every registered C++ test case; exits non-zero on any failure. Needs the Dawn library:
// tests/run.sh sets TORCH_WEBGPU_DAWN_LIBRARY from the installed pydawn.
#include <cstdlib>

#include "harness.h"

int main() {
  if (!std::getenv("TORCH_WEBGPU_DAWN_LIBRARY")) {
    std::cerr << "set TORCH_WEBGPU_DAWN_LIBRARY to Dawn's library (tests/run.sh does)\n";
    return 2;
  }
  int failed_cases = 0;
  for (auto& c : webgpu_test::cases()) {
    const int before = webgpu_test::failures();
    try {
      c.fn();
    } catch (const std::exception& e) {
      std::cerr << "  exception: " << e.what() << "\n";
      ++webgpu_test::failures();
    }
    const bool ok = webgpu_test::failures() == before;
    failed_cases += !ok;
    std::cout << (ok ? "[ OK ] " : "[FAIL] ") << c.name << std::endl;
  }
  std::cout << webgpu_test::cases().size() - failed_cases << "/" << webgpu_test::cases().size() << " passed\n";
  return failed_cases ? 1 : 0;
}
