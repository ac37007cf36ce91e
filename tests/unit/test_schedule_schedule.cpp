#include "npucc/error.h"
#include "npucc/schedule.h"

#include <cmath>
#include <doctest/doctest.h>
#include <limits>

using npucc::AccelerateTrainMode;
using npucc::decide;
using npucc::GraphRole;
using npucc::LossReport;
using npucc::parse_accelerate_train_mode;
using npucc::PrecisionSchedule;
using npucc::StepReport;

namespace {

GraphRole by_step(const char* mode, int64_t step, int64_t total, int64_t per_loop = 1) {
  return decide(parse_accelerate_train_mode(mode), StepReport{step, total, per_loop});
}

GraphRole by_loss(const char* mode, double loss, double final_loss) {
  return decide(parse_accelerate_train_mode(mode), LossReport{loss, final_loss});
}

} // namespace

TEST_SUITE("npucc::PrecisionSchedule") {
  TEST_CASE("step threshold is floor(total * ratio), exact in decimal") {
    CHECK(npucc::step_to_switch(10000, 0.9) == 9000);
    CHECK(npucc::step_to_switch(10, 0.9) == 9);
    CHECK(npucc::step_to_switch(10, 0.2) == 2);
    CHECK(npucc::step_to_switch(3, 0.9) == 2);
    CHECK(npucc::step_to_switch(1, 0.9) == 0);
    CHECK(npucc::step_to_switch(1000, 0.35) == 350);
    CHECK(npucc::step_to_switch(100, 0.29) == 29); // 100 * 0.29 is 28.999999999999996 in double
    CHECK(npucc::step_to_switch(100, 0.57) == 57); // 56.99999999999999 in double
    CHECK(npucc::step_to_switch(999999999999, 0.9) == 899999999999);
    CHECK(npucc::step_to_switch(std::numeric_limits<int64_t>::max(), 0.5) ==
          std::numeric_limits<int64_t>::max() / 2);
    // Every total up to 10^5 with a handful of ratios, against integer arithmetic.
    for (int64_t total = 1; total <= 100000; ++total) {
      REQUIRE(npucc::step_to_switch(total, 0.9) == total * 9 / 10);
      REQUIRE(npucc::step_to_switch(total, 0.29) == total * 29 / 100);
      REQUIRE(npucc::step_to_switch(total, 0.57) == total * 57 / 100);
      REQUIRE(npucc::step_to_switch(total, 0.333) == total * 333 / 1000);
    }
  }

  TEST_CASE("step rule: the issue's table") {
    CHECK(by_step("fast|step|0.9", 8999, 10000) == GraphRole::low);
    CHECK(by_step("fast|step|0.9", 9000, 10000) == GraphRole::high);
    CHECK(by_step("fast|step", 9000, 10000) == GraphRole::high); // Ascend's unit test
    CHECK(by_step("fast|step|0.9", 0, 10000) == GraphRole::low);
    CHECK(by_step("fast|step|0.9", 12000, 10000) == GraphRole::high);
    CHECK(by_step("fast|step|0.2", 1999, 10000) == GraphRole::low);
    CHECK(by_step("fast|step|0.2", 2000, 10000) == GraphRole::high);
  }

  TEST_CASE("step rule: the last-loop guard") {
    // With 100 iterations per loop the next report would come at step + 100.
    CHECK(by_step("fast|step|0.9", 100, 200, 100) == GraphRole::high);
    CHECK(by_step("fast|step|0.9", 99, 200, 100) == GraphRole::low);
    // Total 10000 at ratio 0.9 (threshold 9000): loops of 100 leave the threshold in charge,
    // loops of 2000 make the guard fire first, at 10000 - 2000.
    CHECK(by_step("fast|step|0.9", 8999, 10000, 100) == GraphRole::low);
    CHECK(by_step("fast|step|0.9", 9000, 10000, 100) == GraphRole::high);
    CHECK(by_step("fast|step|0.9", 7999, 10000, 2000) == GraphRole::low);
    CHECK(by_step("fast|step|0.9", 8000, 10000, 2000) == GraphRole::high);
    CHECK(by_step("fast|step|0.9", 9, 10, 1) == GraphRole::high);
    CHECK(by_step("fast|step|0.9", 8, 10, 1) == GraphRole::low);
    CHECK(by_step("fast|step|0.9", 5, 10, 5) == GraphRole::high);
    CHECK(by_step("fast|step|0.9", 4, 10, 5) == GraphRole::low);
    CHECK(by_step("fast|step|0.9", 0, 10, 10) == GraphRole::high);
    CHECK(by_step("fast|step|0.9", 1, 5, std::numeric_limits<int64_t>::max()) == GraphRole::high);
  }

  TEST_CASE("loss rule") {
    CHECK(npucc::loss_to_switch(2.0, 1.05) == doctest::Approx(2.1));
    // Ascend's unit test: fast1|loss|1.1 with target 1.1.
    CHECK(by_loss("fast1|loss|1.1", 1.21, 1.1) == GraphRole::high);
    CHECK(by_loss("fast1|loss|1.1", 1.22, 1.1) == GraphRole::low);
    // The same values computed in float32 by the training loop.
    CHECK(by_loss("fast1|loss|1.1", static_cast<double>(1.21f), static_cast<double>(1.1f)) ==
          GraphRole::high);
    CHECK(by_loss("fast1|loss|1.1", static_cast<double>(1.22f), static_cast<double>(1.1f)) ==
          GraphRole::low);
    // 0 is "not reported yet".
    CHECK(by_loss("fast1|loss|1.1", 0.0, 1.1) == GraphRole::low);
    CHECK(by_loss("fast|loss", 1e-9, 1.0) == GraphRole::high);
    // Exactly at and just above the threshold (1.05 by default).
    CHECK(by_loss("fast|loss", 1.05, 1.0) == GraphRole::high);
    CHECK(by_loss("fast|loss", 2.1, 2.0) == GraphRole::high);
    CHECK(by_loss("fast|loss|1.1", 0.77, 0.7) == GraphRole::high);
    CHECK(by_loss("fast|loss", 1.05 * (1 + 1e-6), 1.0) == GraphRole::low);
    // Within the float32-sized tolerance (k_loss_tolerance, 2^-22 relative) counts as equal.
    CHECK(by_loss("fast|loss", 1.0500001, 1.0) == GraphRole::high);
    CHECK(by_loss("fast|loss", 1.0500003, 1.0) == GraphRole::low);
    CHECK(by_loss("fast|loss", 1.051, 1.0) == GraphRole::low);
    CHECK(by_loss("fast|loss", 5.0, 1.0) == GraphRole::low);
    // Every decimal loss within a step of 0.001 around its threshold, for many targets.
    for (int target_milli = 100; target_milli <= 5000; target_milli += 7) {
      const double target = target_milli / 1000.0;
      const int at_milli_x100 = target_milli * 110; // threshold * 10^5 with ratio 1.1
      const double at = at_milli_x100 / 100000.0;
      REQUIRE(by_loss("fast|loss|1.1", at, target) == GraphRole::high);
      REQUIRE(by_loss("fast|loss|1.1", (at_milli_x100 + 1) / 100000.0, target) == GraphRole::low);
      REQUIRE(by_loss("fast|loss|1.1", (at_milli_x100 - 1) / 100000.0, target) == GraphRole::high);
    }
  }

  TEST_CASE("switches once and never back") {
    SUBCASE("step") {
      PrecisionSchedule schedule(parse_accelerate_train_mode("fast|step|0.5"));
      CHECK(schedule.current() == GraphRole::low);
      CHECK_FALSE(schedule.switched());
      CHECK(schedule.report_step(10, 100) == GraphRole::low);
      CHECK(schedule.report_step(49, 100) == GraphRole::low);
      CHECK(schedule.report_step(50, 100) == GraphRole::high);
      CHECK(schedule.switched());
      // A restarted counter or a bigger total would say low again; the schedule stays high.
      CHECK(schedule.report_step(0, 100) == GraphRole::high);
      CHECK(schedule.report_step(50, 1000) == GraphRole::high);
      CHECK(schedule.current() == GraphRole::high);
    }
    SUBCASE("loss") {
      PrecisionSchedule schedule(parse_accelerate_train_mode("fast1|loss|1.1"));
      CHECK(schedule.report_loss(0.0, 1.0) == GraphRole::low);
      CHECK(schedule.report_loss(3.0, 1.0) == GraphRole::low);
      CHECK(schedule.report_loss(1.1, 1.0) == GraphRole::high);
      CHECK(schedule.report_loss(3.0, 1.0) == GraphRole::high); // loss spike: no switch back
      CHECK(schedule.report_loss(0.0, 1.0) == GraphRole::high);
      CHECK(schedule.mode().to_string() == "fast1|loss|1.1");
    }
  }

  TEST_CASE("a saved state restores the switch in a resumed run") {
    PrecisionSchedule run(parse_accelerate_train_mode("fast|step|0.5"));
    CHECK(run.state().mode == "fast|step|0.5");
    CHECK(run.state().role == GraphRole::low);
    run.report_step(60, 100);
    npucc::ScheduleState saved = run.state();
    CHECK(saved.role == GraphRole::high);

    // A resumed job whose step counter restarted would say low; the saved state says high.
    PrecisionSchedule resumed(parse_accelerate_train_mode("fast|step|0.5"));
    resumed.restore(saved);
    CHECK(resumed.current() == GraphRole::high);
    CHECK(resumed.report_step(0, 100) == GraphRole::high);

    // A checkpoint from before the switch runs low again, as load_state_dict would.
    resumed.restore({"fast|step|0.5", GraphRole::low});
    CHECK(resumed.report_step(10, 100) == GraphRole::low);

    CHECK_THROWS_WITH_AS(resumed.restore({"fast|step|0.9", GraphRole::high}),
                         "the saved schedule state is for accelerate_train_mode "
                         "\"fast|step|0.9\", not \"fast|step|0.5\"",
                         npucc::Error);
    CHECK_THROWS_AS(resumed.restore({"nonsense", GraphRole::high}), npucc::Error);
    CHECK(resumed.current() == GraphRole::low);

    // Modes compare in their canonical form: "fast|step" is "fast|step|0.9".
    PrecisionSchedule defaults(parse_accelerate_train_mode("fast|step"));
    defaults.restore({"fast|step|0.9", GraphRole::high});
    CHECK(defaults.switched());
  }

  TEST_CASE("graph roles parse back from their names") {
    CHECK(npucc::parse_graph_role("low", "role") == GraphRole::low);
    CHECK(npucc::parse_graph_role(npucc::to_string(GraphRole::high), "role") == GraphRole::high);
    CHECK_THROWS_WITH_AS(npucc::parse_graph_role("High", "state role"),
                         "state role \"High\" is not a graph role", npucc::Error);
  }

  TEST_CASE("invalid inputs are clear errors") {
    const AccelerateTrainMode step = parse_accelerate_train_mode("fast|step");
    const AccelerateTrainMode loss = parse_accelerate_train_mode("fast|loss");
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    CHECK_THROWS_WITH_AS(decide(step, StepReport{0, 0, 1}),
                         doctest::Contains("total step 0 must be at least 1"), npucc::Error);
    CHECK_THROWS_WITH_AS(decide(step, StepReport{0, -5, 1}), doctest::Contains("total step -5"),
                         npucc::Error);
    CHECK_THROWS_WITH_AS(decide(step, StepReport{-1, 10, 1}),
                         doctest::Contains("step -1 must not be negative"), npucc::Error);
    CHECK_THROWS_WITH_AS(decide(step, StepReport{1, 10, 0}),
                         doctest::Contains("iterations per loop 0"), npucc::Error);
    CHECK_THROWS_WITH_AS(decide(loss, LossReport{nan, 1.0}), doctest::Contains("loss nan"),
                         npucc::Error);
    CHECK_THROWS_WITH_AS(decide(loss, LossReport{-0.5, 1.0}), doctest::Contains("loss -0.5"),
                         npucc::Error);
    CHECK_THROWS_WITH_AS(decide(loss, LossReport{inf, 1.0}), doctest::Contains("loss inf"),
                         npucc::Error);
    CHECK_THROWS_WITH_AS(decide(loss, LossReport{1.0, 0.0}), doctest::Contains("final loss 0"),
                         npucc::Error);
    CHECK_THROWS_WITH_AS(decide(loss, LossReport{1.0, nan}), doctest::Contains("final loss nan"),
                         npucc::Error);
    CHECK_THROWS_WITH_AS(decide(step, LossReport{1.0, 1.0}),
                         doctest::Contains("switches on step but was given a loss"), npucc::Error);
    CHECK_THROWS_WITH_AS(decide(loss, StepReport{1, 10, 1}),
                         doctest::Contains("switches on loss but was given a step"), npucc::Error);
    // A hand-built mode with an out-of-range ratio.
    CHECK_THROWS_WITH_AS(PrecisionSchedule(AccelerateTrainMode{npucc::LowPrecision::float16,
                                                               npucc::SwitchTrigger::step, 0.95}),
                         doctest::Contains("ratio 0.95"), npucc::Error);
    CHECK_THROWS_AS(npucc::step_to_switch(10, nan), npucc::Error);
    try {
      decide(step, StepReport{0, 0, 1});
    } catch (const npucc::Error& error) {
      CHECK(error.status() == npucc::ExitStatus::usage);
    }
    // A failed report leaves the schedule as it was.
    PrecisionSchedule schedule(step);
    CHECK_THROWS_AS(schedule.report_step(9999, 0), npucc::Error);
    CHECK(schedule.current() == GraphRole::low);
  }

  TEST_CASE("role names") {
    CHECK(npucc::to_string(GraphRole::low) == "low");
    CHECK(npucc::to_string(GraphRole::high) == "high");
  }
}
