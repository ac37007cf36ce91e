#include "report/drift_scale.h"

#include <doctest/doctest.h>

using npucc::report::LogScale;
using npucc::report::order_ticks;

TEST_SUITE("npucc::report::drift_scale") {

TEST_CASE("whole decades around the figures; a figure's height is its log") {
  const LogScale scale = LogScale::fit({1e-7, std::nullopt, 1e-3}, std::nullopt);
  CHECK(scale.data_low() == -7);
  CHECK(scale.high() == -3);
  CHECK_FALSE(scale.has_floor());
  CHECK(scale.fraction(1e-5) == doctest::Approx(0.5));
  CHECK(scale.fraction(1e-7) == doctest::Approx(0.0));
  CHECK(scale.fraction(1e-3) == doctest::Approx(1.0));
  CHECK(scale.fraction(1e-6) - scale.fraction(1e-7) == doctest::Approx(0.25));
}

TEST_CASE("an error of 0 sits on a floor a decade below the data, labelled 0") {
  const LogScale scale = LogScale::fit({0.0, 1e-6, 1e-2}, std::nullopt);
  CHECK(scale.has_floor());
  CHECK(scale.axis_low() == -7);
  CHECK(scale.fraction(0) == 0);
  CHECK(scale.fraction(1e-6) > 0.1); // the smallest real figure stays off the floor
  CHECK(scale.floor_label() == "0");
  CHECK(scale.tick_decades().front() == -7);
}

TEST_CASE("the span is capped; what falls below is on the floor, labelled with the cap") {
  const LogScale scale = LogScale::fit({1e-30, 1.0}, std::nullopt);
  CHECK(scale.data_low() == -LogScale::k_max_decades);
  CHECK(scale.has_floor());
  CHECK(scale.fraction(1e-30) == 0);
  CHECK(scale.floor_label() == "<1e-16");
  CHECK(scale.tick_decades().size() <= 10);
}

TEST_CASE("the threshold gets a decade either side, whatever its rounding") {
  const LogScale scale = LogScale::fit({}, 1.0 - 0.9999);
  CHECK(scale.data_low() == -5);
  CHECK(scale.high() == -3);
  CHECK(scale.fraction(1.0 - 0.9999) == doctest::Approx(0.5));
}

TEST_CASE("nothing to fit: a default span, no floor") {
  const LogScale scale = LogScale::fit({std::nullopt}, std::nullopt);
  CHECK(scale.data_low() == -8);
  CHECK(scale.high() == 0);
  CHECK_FALSE(scale.has_floor());
}

TEST_CASE("decade labels and order ticks") {
  CHECK(npucc::report::decade_label(-4) == "1e-4");
  CHECK(npucc::report::decade_label(0) == "1");
  CHECK(npucc::report::decade_label(2) == "100");
  CHECK(npucc::report::decade_label(5) == "1e5");
  CHECK(order_ticks(0).empty());
  CHECK(order_ticks(1) == std::vector<size_t>{0});
  CHECK(order_ticks(120).size() == 12);
  CHECK(order_ticks(120)[1] == 10);
  CHECK(order_ticks(3000)[1] == 500);
  CHECK(order_ticks(3001).size() <= 12);
}

}
