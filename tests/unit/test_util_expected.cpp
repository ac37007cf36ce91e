#include "npucc/error.h"
#include "util/expected.h"

#include <doctest/doctest.h>
#include <memory>
#include <string>

using npucc::util::Expected;

namespace {

Expected<int> half_of(int n) {
  if (n % 2 != 0) {
    return npucc::Error(std::to_string(n) + " is odd", "give an even number");
  }
  return n / 2;
}

} // namespace

TEST_SUITE("npucc::util::Expected") {
  TEST_CASE("holds a value, or the error that kept it from being made") {
    Expected<int> four = half_of(8);
    REQUIRE(four.has_value());
    CHECK(*four == 4);
    CHECK(four.value() == 4);
    Expected<int> odd = half_of(3);
    REQUIRE_FALSE(odd);
    CHECK(std::string(odd.error().what()) == "3 is odd");
    CHECK(std::move(odd).value_or(-1) == -1);
    CHECK(half_of(6).ok() == std::optional<int>(3));
    CHECK(half_of(5).ok() == std::nullopt);
  }

  TEST_CASE("value() throws the very error, hint and all, for a caller that cannot go on") {
    try {
      half_of(7).value();
      FAIL("expected an error");
    } catch (const npucc::Error& e) {
      CHECK(std::string(e.what()) == "7 is odd");
      CHECK(e.hint() == "give an even number");
    }
  }

  TEST_CASE("takes a value that can only be moved") {
    Expected<std::unique_ptr<int>> made = std::make_unique<int>(5);
    std::unique_ptr<int> taken = std::move(made).value();
    CHECK(*taken == 5);
    npucc::util::Outcome fine = npucc::util::success();
    CHECK(fine.has_value());
  }
}
