// The unit test runner: doctest, with every test run given its own temporary folder
// (NPUCC_TEST_TMP, kept when a test fails so it can be examined).
#define DOCTEST_CONFIG_IMPLEMENT
#include "test_support.h"

#include <cstdlib>
#include <doctest/doctest.h>
#include <iostream>

int main(int argc, char** argv) {
  npucc::test::TempRoot root;
  doctest::Context context(argc, argv);
  int status = context.run();
  if (status != 0) {
    root.keep();
    std::cerr << "test files kept in " << root.path().string() << "\n";
  }
  return status;
}
