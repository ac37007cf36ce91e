// Replays every input kept in testdata/fuzz-regressions/<target>/ through exactly what
// its fuzz target does (tests/fuzz/fuzz_inputs.h): each once crashed, hung, leaked or
// tripped a sanitizer, and must now be refused (npucc::Error) or accepted cleanly.
#include "../fuzz/fuzz_inputs.h"
#include "test_support.h"
#include "util/file_io.h"

#include <algorithm>
#include <doctest/doctest.h>

namespace {

std::vector<std::filesystem::path> kept_inputs(const std::string& target) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(npucc::test::testdata("fuzz-regressions/" + target))) {
    if (entry.is_regular_file()) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

template <typename Feed> void replay(const std::string& target, Feed feed) {
  auto files = kept_inputs(target);
  REQUIRE_FALSE(files.empty());
  for (const auto& file : files) {
    CAPTURE(file.string());
    std::string bytes = npucc::util::read_file(file);
    // A kept hang must now finish: ctest's timeout catches one that does not.
    CHECK_NOTHROW(feed(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  }
}

} // namespace

TEST_SUITE("npucc::fuzz regressions") {
  TEST_CASE("model reader inputs are refused or accepted, never crash") {
    replay("fuzz_model_reader",
           [](const uint8_t* data, size_t size) { npucc::fuzz::feed_model_reader(data, size); });
  }

  TEST_CASE("option parser inputs are refused or accepted, never crash") {
    replay("fuzz_options",
           [](const uint8_t* data, size_t size) { npucc::fuzz::feed_options(data, size); });
  }

  TEST_CASE("cache entry headers are refused or round-trip, never crash") {
    replay("fuzz_cache_entry",
           [](const uint8_t* data, size_t size) { npucc::fuzz::feed_cache_entry(data, size); });
  }

  TEST_CASE("cached manifests are refused or read, never crash") {
    replay("fuzz_manifest",
           [](const uint8_t* data, size_t size) { npucc::fuzz::feed_manifest(data, size); });
  }
}
