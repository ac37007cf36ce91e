#include "util/shared_library.h"

#include "npucc/error.h"

#include <dlfcn.h>

namespace npucc::util {

namespace {

std::string dl_problem() {
  const char* text = ::dlerror();
  return text != nullptr ? text : "unknown error";
}

} // namespace

SharedLibrary::SharedLibrary(std::string soname, std::string package)
    : m_soname(std::move(soname)), m_package(std::move(package)) {
  m_handle = ::dlopen(m_soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (m_handle == nullptr) {
    throw Error("cannot load " + m_soname + ": " + dl_problem(),
                "install the " + m_package + " package");
  }
}

void* SharedLibrary::address(const char* name) const {
  ::dlerror();
  void* address = ::dlsym(m_handle, name);
  if (address == nullptr) {
    throw Error(m_soname + " has no function " + name + ": " + dl_problem(),
                "install a newer " + m_package + " package");
  }
  return address;
}

} // namespace npucc::util
