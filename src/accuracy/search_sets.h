#pragma once

#include "accuracy/samples.h"
#include "accuracy/sample_runner.h"
#include "npucc/compile.h"

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>
#include <string>
#include <vector>

// The sets an accuracy measurement runs on and the runtime it runs them in: shared by the
// compile's check (compile_check.h) and `npucc compare` (compare/compare.h), so both read
// samples, validation sets and their report block the same way.
namespace npucc::accuracy {

// The search's sets and the validation sets (--validation-inputs, else held out of the
// samples when there is a target to search for), and the validation block's provenance.
struct CheckSets {
  accuracy::Samples search;
  accuracy::Samples validation;
  std::string validation_origin; // "validation-inputs" or "held-out"; empty for none
};

// The sets of options.sample_inputs (random inputs without them) and
// options.validation_inputs. With `hold_out` (a target the repair searches for) and no
// --validation-inputs, every 4th sample set is held out (accuracy::hold_out).
CheckSets check_sets(const CompileOptions& options, const std::vector<accuracy::ModelInput>& inputs,
                     bool hold_out);

// The report's "validation" object: where the sets came from, and their figures.
nlohmann::json validation_json(const CheckSets& sets, const Metrics& metrics);

// The runtime processes: one per core, up to one per set of a batch, and two for the two
// graphs of the first run (runtime.h: the same bits either way).
size_t runtime_processes(const accuracy::Samples& samples);

// The names of the graph's outputs, in order.
std::vector<std::string> output_names(const onnx::GraphProto& graph);

} // namespace npucc::accuracy
