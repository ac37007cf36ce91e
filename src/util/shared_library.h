#pragma once

#include <string>

namespace npucc::util {

// A shared library opened when first needed (dlopen) rather than by the dynamic linker
// at every start. libcurl and hiredis, with the 30 libraries they pull in, cost every
// npucc run 11 ms to load (tests/bench/PROFILING.md); only runs with a remote cache use
// them. The library stays loaded until the process ends.
class SharedLibrary {
public:
  // Opens `soname` (libcurl.so.4). Throws npucc::Error naming it and the Debian
  // `package` that provides it when it cannot be loaded.
  SharedLibrary(std::string soname, std::string package);

  // The function `name`, as a pointer of type F (decltype(&curl_easy_init)). Throws
  // npucc::Error when the library lacks it (a version too old).
  template <typename F> F function(const char* name) const {
    return reinterpret_cast<F>(address(name));
  }

private:
  void* address(const char* name) const;

  std::string m_soname;
  std::string m_package;
  void* m_handle = nullptr;
};

} // namespace npucc::util
