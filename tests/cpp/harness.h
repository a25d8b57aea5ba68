// A minimal test harness for the C++ unit tests (no external framework): TEST registers a case,
// EXPECT records a failure with its location, main runs every case and reports.
#pragma once
#include <functional>
#include <iostream>
#include <string>
#include <vector>

namespace webgpu_test {

struct Case {
  const char* name;
  std::function<void()> fn;
};
inline std::vector<Case>& cases() {
  static std::vector<Case> c;
  return c;
}
inline int& failures() {
  static int f = 0;
  return f;
}
struct Register {
  Register(const char* n, std::function<void()> f) { cases().push_back({n, std::move(f)}); }
};

}  // namespace webgpu_test

#define WEBGPU_CAT2(a, b) a##b
#define WEBGPU_CAT(a, b) WEBGPU_CAT2(a, b)
#define TEST(name)                                                  \
  static void name();                                               \
  static webgpu_test::Register WEBGPU_CAT(reg_, name)(#name, name); \
  static void name()
#define EXPECT(cond)                                                                        \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      std::cerr << "  EXPECT failed: " #cond " at " << __FILE__ << ":" << __LINE__ << "\n"; \
      ++webgpu_test::failures();                                                            \
    }                                                                                       \
  } while (0)
#define EXPECT_THROWS(stmt, substr)                                                                \
  do {                                                                                             \
    bool thrown = false;                                                                           \
    try {                                                                                          \
      stmt;                                                                                        \
    } catch (const std::exception& e) {                                                            \
      thrown = std::string(e.what()).find(substr) != std::string::npos;                            \
      if (!thrown) std::cerr << "  unexpected message: " << e.what() << "\n";                      \
    }                                                                                              \
    if (!thrown) {                                                                                 \
      std::cerr << "  EXPECT_THROWS failed: " #stmt " at " << __FILE__ << ":" << __LINE__ << "\n"; \
      ++webgpu_test::failures();                                                                   \
    }                                                                                              \
  } while (0)
