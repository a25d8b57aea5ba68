// Runs every registered C++ test case; exits non-zero on any failure. Dawn comes from the wgpudawn
// package, which exports no C symbols: an embedded interpreter runs torch_webgpu/_dawn.py (loaded by
// path, without torch_webgpu's native module) to hand its function addresses over, as
// `import torch_webgpu` does. tests/run.sh sets PYTHONPATH to the test environment's site-packages.
#include <Python.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <string>

#include "harness.h"
#include "runtime/dawn.h"

namespace {

std::string exe_dir() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  std::string p(buf, n);
  return p.substr(0, p.rfind('/'));
}

// _dawn.py beside the installed binary (torch_webgpu/bin/..), else in the source tree.
std::string dawn_py() {
  for (std::string p : {exe_dir() + "/../_dawn.py", std::string(TORCH_WEBGPU_SOURCE_DIR) + "/torch_webgpu/_dawn.py"})
    if (access(p.c_str(), R_OK) == 0) return p;
  return "";
}

bool hand_over_dawn() {
  const std::string path = dawn_py();
  if (path.empty()) {
    std::cerr << "torch_webgpu/_dawn.py not found\n";
    return false;
  }
  Py_Initialize();
  PyObject* names = PyList_New(0);
  for (const std::string& n : webgpu::rt::proc_names()) {
    PyObject* s = PyUnicode_FromString(n.c_str());
    PyList_Append(names, s);
    Py_DECREF(s);
  }
  PyObject* main = PyImport_AddModule("__main__");
  PyObject* g = PyModule_GetDict(main);
  PyDict_SetItemString(g, "_names", names);
  PyDict_SetItemString(g, "_path", PyUnicode_FromString(path.c_str()));
  const char* code =
      "import importlib.util\n"
      "_spec = importlib.util.spec_from_file_location('torch_webgpu_dawn', _path)\n"
      "_mod = importlib.util.module_from_spec(_spec)\n"
      "_spec.loader.exec_module(_mod)\n"
      "_procs = _mod.dawn_procs(_names)\n";
  if (PyRun_SimpleString(code) != 0) return false;
  PyObject* procs = PyDict_GetItemString(g, "_procs");
  std::unordered_map<std::string, uintptr_t> addr;
  PyObject *k, *v;
  Py_ssize_t pos = 0;
  while (PyDict_Next(procs, &pos, &k, &v)) addr[PyUnicode_AsUTF8(k)] = PyLong_AsUnsignedLongLong(v);
  webgpu::rt::set_dawn_procs(addr);
  return !addr.empty();
}

}  // namespace

int main() {
  if (!hand_over_dawn()) {
    std::cerr << "could not load the Dawn runtime from wgpudawn (set PYTHONPATH to the site-packages that "
                 "hold it; tests/run.sh does)\n";
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
  // The interpreter stays up: Dawn lives in its extension module, and tearing Python down first
  // would unload what the static destructors of our devices still call.
  std::cout.flush();
  std::_Exit(failed_cases ? 1 : 0);
}
