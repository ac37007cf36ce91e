#include "runtime/library_location.h"

#include "npucc/error.h"
#include "runtime/runtime.h"

#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <link.h>
#include <memory>
#include <sys/stat.h>
#include <vector>

namespace npucc::runtime {

#ifndef NPUCC_HAVE_ONNXRUNTIME

std::string onnxruntime_library_path() { return {}; }

OnnxRuntimeReport report_onnxruntime() {
  OnnxRuntimeReport report;
  report.problem = "built without ONNX Runtime: --check-accuracy is unavailable";
  return report;
}

#else

namespace {

// Any object of this module: its address tells dladdr which module (npucc, the Python
// extension, a program linking the library) this code is part of.
const char k_anchor = 0;

struct FreeDeleter {
  void operator()(void* pointer) const { std::free(pointer); }
};

// The folders the dynamic linker searches for a library this module opens (dlinfo's
// RTLD_DI_SERINFO): LD_LIBRARY_PATH, the module's run path with $ORIGIN replaced by its
// folder, then the system's. The module, not the process: in Python the extension's run
// path counts, not python3's.
std::vector<std::string> search_folders() {
  Dl_info info{};
  void* module = nullptr;
  if (::dladdr1(&k_anchor, &info, &module, RTLD_DL_LINKMAP) == 0 || module == nullptr) {
    return {};
  }
  Dl_serinfo sizes{};
  if (::dlinfo(module, RTLD_DI_SERINFOSIZE, &sizes) != 0) {
    return {};
  }
  std::unique_ptr<void, FreeDeleter> buffer(std::malloc(sizes.dls_size));
  auto* serinfo = static_cast<Dl_serinfo*>(buffer.get());
  if (serinfo == nullptr || ::dlinfo(module, RTLD_DI_SERINFOSIZE, serinfo) != 0 ||
      ::dlinfo(module, RTLD_DI_SERINFO, serinfo) != 0) {
    return {};
  }
  std::vector<std::string> folders;
  for (unsigned i = 0; i < serinfo->dls_cnt; ++i) {
    folders.emplace_back(serinfo->dls_serpath[i].dls_name);
  }
  return folders;
}

bool is_file(const std::string& path) {
  struct stat status {};
  return ::stat(path.c_str(), &status) == 0 && S_ISREG(status.st_mode);
}

} // namespace


std::string onnxruntime_library_path() {
  const char* chosen = std::getenv("NPUCC_ONNXRUNTIME_LIBRARY");
  if (chosen != nullptr && *chosen != '\0') {
    return chosen;
  }
  for (const auto& folder : search_folders()) {
    // Not a relative folder (an empty run path entry is "."): that would be the working
    // directory's library, whoever put it there.
    if (folder.empty() || folder.front() != '/') {
      continue;
    }
    std::string path = folder + "/" + NPUCC_ONNXRUNTIME_SONAME;
    if (is_file(path)) {
      // PREFIX/lib/npucc/..., not PREFIX/bin/../lib/npucc/... (symbolic links kept).
      return std::filesystem::path(path).lexically_normal().string();
    }
  }
  return NPUCC_ONNXRUNTIME_SONAME;
}

OnnxRuntimeReport report_onnxruntime() {
  OnnxRuntimeReport report;
  report.built_with = true;
  report.c_api = NPUCC_ONNXRUNTIME_API_VERSION;
  report.library = onnxruntime_library_path();
  try {
    const std::string said = start_runtime(1)->version(); // "ONNX Runtime 1.30.0"
    const std::string prefix = "ONNX Runtime ";
    report.version = said.rfind(prefix, 0) == 0 ? said.substr(prefix.size()) : said;
  } catch (const Error& e) {
    report.problem = e.what();
  }
  return report;
}

#endif

} // namespace npucc::runtime
