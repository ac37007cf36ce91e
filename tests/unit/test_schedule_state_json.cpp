#include "npucc/error.h"
#include "npucc/schedule.h"

#include <doctest/doctest.h>
#include <string>

using npucc::GraphRole;
using npucc::parse_accelerate_train_mode;
using npucc::parse_schedule_state_json;
using npucc::PrecisionSchedule;
using npucc::schedule_state_json;
using npucc::ScheduleState;

namespace {

// The message parse_schedule_state_json throws for `text`, or "" when it accepts it.
std::string refusal(const std::string& text) {
  try {
    parse_schedule_state_json(text, "state.json");
  } catch (const npucc::Error& error) {
    return error.what();
  }
  return "";
}

} // namespace

TEST_SUITE("npucc::ScheduleStateJson") {
  TEST_CASE("a saved state reads back and continues a schedule one-way") {
    PrecisionSchedule before(parse_accelerate_train_mode("fast1|loss|1.1"));
    CHECK(before.report_loss(1.0, 1.0) == GraphRole::high);
    const std::string saved = schedule_state_json(before.state());
    CHECK(saved.find("\"format\": \"npucc-schedule-state\"") != std::string::npos);

    PrecisionSchedule resumed(parse_accelerate_train_mode("fast1|loss|1.1"));
    resumed.restore(parse_schedule_state_json(saved, "checkpoint"));
    CHECK(resumed.current() == GraphRole::high);
    CHECK(resumed.report_loss(5.0, 1.0) == GraphRole::high);
  }

  TEST_CASE("the mode is stored canonically") {
    const ScheduleState state = parse_schedule_state_json(
        R"({"format":"npucc-schedule-state","format_version":1,"mode":"fast|step",)"
        R"("role":"low","switched":false})",
        "state.json");
    CHECK(state.mode == "fast|step|0.9");
    CHECK(state.role == GraphRole::low);
  }

  TEST_CASE("foreign, damaged and newer documents are refused naming the file") {
    const std::string head = R"({"format":"npucc-schedule-state","format_version":)";
    CHECK(refusal("not json").find("state.json is not an npucc schedule state") == 0);
    CHECK(refusal(R"({"format":"other","mode":"fast|step"})").find("not an npucc") !=
          std::string::npos);
    CHECK(refusal("[1,2]").find("not an npucc") != std::string::npos);
    CHECK(refusal(head + R"(2,"mode":"fast|step","role":"low","switched":false})")
              .find("format_version 2") != std::string::npos);
    CHECK(refusal(head + R"(1,"mode":"fast|jump","role":"low","switched":false})")
              .find("state.json: ") == 0);
    CHECK(refusal(head + R"(1,"mode":"fast|step","role":"mid","switched":false})")
              .find("not a graph role") != std::string::npos);
    CHECK(refusal(head + R"(1,"mode":"fast|step","role":"high","switched":false})")
              .find("switched false") != std::string::npos);
    CHECK(refusal(head + R"(1,"mode":"fast|step","role":"low"})").find("\"switched\"") !=
          std::string::npos);
  }
}
