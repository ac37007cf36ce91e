#include "npucc/error.h"
#include "util/shared_library.h"

#include <doctest/doctest.h>
#include <string>

using npucc::util::SharedLibrary;

TEST_SUITE("npucc::util::SharedLibrary") {
  TEST_CASE("a library that is not installed is one error naming it and its package") {
    try {
      SharedLibrary library("libnpucc-absent.so.7", "libnpucc-absent7");
      FAIL("an absent library loaded");
    } catch (const npucc::Error& e) {
      CHECK(std::string(e.what()).find("cannot load libnpucc-absent.so.7") == 0);
      CHECK(e.hint() == "install the libnpucc-absent7 package");
    }
  }

  TEST_CASE("functions are found by name, and a missing one is an error") {
    SharedLibrary libc("libc.so.6", "libc6");
    auto length = libc.function<size_t (*)(const char*)>("strlen");
    CHECK(length("npucc") == 5);
    try {
      libc.function<void (*)()>("npucc_no_such_function");
      FAIL("a missing function was found");
    } catch (const npucc::Error& e) {
      CHECK(std::string(e.what()).find("libc.so.6 has no function npucc_no_such_function") == 0);
    }
  }
}
