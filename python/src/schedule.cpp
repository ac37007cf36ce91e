// The schedule (npucc/schedule.h, SPEC §1) for npucc.Schedule: roles as the strings
// "low" / "high", states as the JSON document of schedule_state_json(). Cheap calls: the
// GIL stays held.
#include "npucc/schedule.h"

#include "bindings.h"
#include "npucc/train_mode.h"

#include <pybind11/stl.h>

namespace py = pybind11;

namespace npucc::python {

namespace {

// What a checkpoint's state is called in messages (parse_schedule_state_json's `where`).
constexpr const char* k_checkpoint_state = "the checkpoint's schedule state";

py::tuple mode_fields(const AccelerateTrainMode& mode) {
  return py::make_tuple(mode.type_name(), mode.trigger_name(), mode.ratio,
                        mode.low == LowPrecision::float16 ? "float16" : "bfloat16",
                        mode.to_string());
}

void restore_state(PrecisionSchedule& schedule, const std::string& state_json) {
  schedule.restore(parse_schedule_state_json(state_json, k_checkpoint_state));
}

} // namespace

void bind_schedule(py::module_& module) {
  module.def(
      "parse_accelerate_train_mode",
      [](const std::string& text) { return mode_fields(parse_accelerate_train_mode(text)); },
      py::arg("text"), "(type, trigger, ratio, low_precision, canonical text) of a mode");

  py::class_<PrecisionSchedule>(module, "PrecisionSchedule")
      .def(py::init([](const std::string& mode) {
             return PrecisionSchedule(parse_accelerate_train_mode(mode));
           }),
           py::arg("mode"))
      .def(
          "report_step",
          [](PrecisionSchedule& schedule, int64_t step, int64_t total_step,
             int64_t iterations_per_loop) {
            return to_string(schedule.report_step(step, total_step, iterations_per_loop));
          },
          py::arg("step"), py::arg("total_step"), py::arg("iterations_per_loop"))
      .def(
          "report_loss",
          [](PrecisionSchedule& schedule, double loss, double final_loss) {
            return to_string(schedule.report_loss(loss, final_loss));
          },
          py::arg("loss"), py::arg("final_loss"))
      .def_property_readonly("role",
                             [](const PrecisionSchedule& s) { return to_string(s.current()); })
      .def_property_readonly("mode",
                             [](const PrecisionSchedule& s) { return mode_fields(s.mode()); })
      .def("state_json", [](const PrecisionSchedule& s) { return schedule_state_json(s.state()); })
      .def("restore_json", &restore_state, py::arg("state_json"));
}

} // namespace npucc::python
