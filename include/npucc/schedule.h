#pragma once

// The runtime side of accelerate_train_mode (SPEC §1, Ascend's TellMeStepOrLossHook): a training
// loop reports its step or its loss, and the schedule says which compiled graph runs now. It
// starts on the low-precision graph and switches to the high-precision one exactly once.

#include "npucc/train_mode.h"

#include <cstdint>
#include <string>

namespace npucc {

enum class GraphRole { low, high };
std::string to_string(GraphRole role); // "low" | "high"
// "low" | "high"; throws usage_error naming `where` and the two values otherwise.
GraphRole parse_graph_role(const std::string& text, const std::string& where);

struct StepReport {
  int64_t step = 0;                // >= 0
  int64_t total_step = 0;          // >= 1
  int64_t iterations_per_loop = 1; // >= 1: reports may arrive once per loop of this many steps
};

struct LossReport {
  double loss = 0;       // >= 0, finite; 0 means "not reported yet" and never switches
  double final_loss = 0; // > 0, finite: the target loss
};

// A loss this close above the threshold (relative) still counts as reaching it: two float32
// ulps, so a loss that equals final_loss*ratio in decimal switches whether the loop computes
// it in float32 or float64 (1.21 with target 1.1 and ratio 1.1 switches; 1.22 does not).
constexpr double k_loss_tolerance = 0x1p-22;

// floor(total_step * ratio), computed exactly with the ratio read as the shortest decimal that
// denotes it, so 10000 * 0.9 is 9000 (not 8999 as a float product would give).
// Throws usage_error when total_step < 1 or the ratio is not a valid step ratio.
int64_t step_to_switch(int64_t total_step, double ratio);

// final_loss * ratio. Throws usage_error when final_loss is not finite and > 0 or the ratio is
// not a valid loss ratio.
double loss_to_switch(double final_loss, double ratio);

// Stateless: the graph the switch rule picks for this one report.
//   step: high when step >= step_to_switch(total_step, ratio)
//         or step + iterations_per_loop >= total_step (the next update may come too late);
//   loss: high when loss != 0 and loss <= loss_to_switch(final_loss, ratio) (with tolerance).
// Throws usage_error for invalid values or a report that does not match mode.trigger.
GraphRole decide(const AccelerateTrainMode& mode, const StepReport& report);
GraphRole decide(const AccelerateTrainMode& mode, const LossReport& report);

// What a schedule has reached, for a training program to save with its checkpoint, so
// that the one-way switch survives a resumed run: two plain fields any checkpoint format
// can hold.
struct ScheduleState {
  std::string mode;                // AccelerateTrainMode::to_string(): "fast|step|0.9"
  GraphRole role = GraphRole::low; // high once the switch has happened
};

// Stateful and one-way: once a report switches it to high it stays high, whatever later
// reports say. Every report is still validated.
class PrecisionSchedule {
public:
  explicit PrecisionSchedule(const AccelerateTrainMode& mode);

  GraphRole report_step(int64_t step, int64_t total_step, int64_t iterations_per_loop = 1);
  GraphRole report_loss(double loss, double final_loss);
  GraphRole report(const StepReport& report);
  GraphRole report(const LossReport& report);

  GraphRole current() const { return m_role; }
  bool switched() const { return m_role == GraphRole::high; }
  const AccelerateTrainMode& mode() const { return m_mode; }

  ScheduleState state() const { return {m_mode.to_string(), m_role}; }
  // Continues from a saved state, as PyTorch's load_state_dict: the role becomes the saved
  // one (a checkpoint from before the switch runs low again). A state saved under another
  // mode is refused (usage_error naming both): its switch point means something else.
  void restore(const ScheduleState& state);

private:
  AccelerateTrainMode m_mode;
  GraphRole m_role = GraphRole::low;
};

} // namespace npucc
