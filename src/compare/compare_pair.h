#pragma once

#include "accuracy/drift_report.h"
#include "npucc/compile.h"
#include "npucc/model.h"

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>
#include <string>
#include <vector>

// `npucc compare`'s two graphs, read, checked and matched by input and output names, and the
// graph that runs for the candidate: its float32 emulation (precision/emulation.h, as the
// compile's check emulates npucc's own low graph: every float16/bfloat16 value rounded where
// the candidate stores it), or the candidate itself for ONNX Runtime to run as it is.
namespace npucc::compare {

// What runs for the candidate: its emulation (what float16/bfloat16 hardware computes), or
// the candidate in ONNX Runtime as is (whose CPU kernels compute many float16 ops in float32).
enum class CandidateRun { emulated, plain };

// An input or output whose element type differs between the two: the reference's float32,
// the candidate's float16/bfloat16 (a converter's keep_io_types=False). Inputs: the float32
// samples are rounded to the candidate's type on the way in (emulated: the emulation's round
// trip on the input; plain: a Cast put before the candidate). Outputs: the candidate's low
// values are compared as they are, widened exactly to float32.
struct IoConversion {
  std::string name;
  bool input = true;
  int32_t reference_type = 0;
  int32_t candidate_type = 0;
};

// A value of the reference and the candidate_run value that holds the same quantity.
struct MatchedValue {
  std::string reference;
  std::string candidate;
  int32_t low_type = 0; // float16 or bfloat16, as the candidate stores it
};

// What a compare's drift report (--accuracy-report nodes) measures: each float16, bfloat16
// or float32 node output of the candidate's main graph, in its node order, that the
// reference's main graph defines under the same name. A low value the reference has no
// name for but whose exact float32 widening (a Cast to float32) it has, as a converter
// writes before a float32 output, is measured as that widening and named after the node
// that made it. `unmatched`: the low values left unmeasured for want of a name in the
// reference (a converter's own Casts among them). If/Loop/Scan bodies are planned the same way
// where the reference holds the same body (the node of the same first output), their values
// read through their nodes (accuracy/body_probe.h); `not_covered`: the bodies that cannot be.
struct CompareDriftPlan {
  std::vector<accuracy::DriftValue> values;
  nlohmann::json not_covered = nlohmann::json::array();
  int64_t unmatched = 0;
};
// `candidate` with its types inferred (value_info), before its emulation is made.
CompareDriftPlan plan_compare_drift(const onnx::GraphProto& candidate,
                                    const onnx::GraphProto& reference);

struct ComparedPair {
  onnx::ModelProto reference;     // as read and checked; runs as is
  onnx::ModelProto candidate_run; // the candidate's emulation, or the candidate as is (plain)
  CandidateRun run = CandidateRun::emulated;
  std::vector<std::string> outputs; // the reference's outputs, in order; the candidate has each
  std::vector<IoConversion> conversions;
  std::vector<int32_t> low_types; // float16/bfloat16, the types the candidate stores values in
  int64_t rounded_values = 0;     // emulated: the round trips (make_emulation)
  // The seam for per-node drift (issue 43 item 1 on a compare): each value the candidate
  // stores in a low type that the reference defines under the same name. In the emulation a
  // stored value keeps its name (its round trip's float32 result carries it), so a probe that
  // exposes `reference` in `reference` and `candidate` in `candidate_run` as outputs compares
  // the same value computed both ways; `low_type` is the type it is stored in (what flushes
  // and overflows are counted against).
  std::vector<MatchedValue> matched_values;
  CompareDriftPlan drift; // planned from the candidate as read, before its emulation
};

// Reads both models (external data included) and ONNX's checker on each; the candidate's
// types are inferred (the emulation finds its low values by type). Throws npucc::Error in one
// line naming the model ("the reference REF: ...", "the candidate CAND: ...") or the input or
// output that does not match: missing, of another element type, of another fixed shape.
// `shapes` (--input-shape) fix dynamic input dims in both, before anything is checked.
ComparedPair prepare_pair(const std::filesystem::path& reference,
                          const std::filesystem::path& candidate, CandidateRun run,
                          const ReadLimits& limits, const std::vector<InputShape>& shapes);

} // namespace npucc::compare
