#pragma once

#include "accuracy/samples.h"
#include "runtime/runtime.h"

#include <cstdint>
#include <functional>
#include <onnx/onnx_pb.h>
#include <string>
#include <string_view>
#include <vector>

// Two graphs run on the same samples with chosen inner values of each exposed as extra graph
// outputs, so that every value is read in a few runtime runs, not one run per value. The
// values are folded into a caller's statistics inside the runtime process (fold_values), or,
// for one graph, come back a few sample sets at a time to a callback (probe_graph), so a
// caller never holds every value of every set. Knows nothing of how the graphs were made: the drift report (drift_report.h) of a compile and `compare`
// both give it two graphs and the names to read in each.
namespace npucc::accuracy {

// Adds each of `names` as an output of `model`'s main graph, of the element type its
// value_info gives, else a Cast's `to` for a Cast's output, else float32, and no shape (the runtime infers it); a name
// already an output is left as it is. Throws npucc::Error naming a value the main graph
// does not define (no node output, input or initializer).
void expose_values(onnx::ModelProto& model, const std::vector<std::string>& names);

// One side of a probe: a graph with its values exposed, and the names to read, paired by
// position with the other side's.
struct ProbeSide {
  std::string what;               // "the high graph": names the graph in errors
  runtime::GraphSource source;
  std::vector<std::string> names;
};

// What the values of the sets of one run may weigh together: a run takes as many sets as
// fit (one at least).
constexpr uint64_t k_probe_run_bytes = uint64_t{256} << 20;

// The bytes one set's values weigh in one graph, from the shapes its value_info states;
// 0 when a value's shape or type is not stated in full (a dynamic dim).
uint64_t stated_bytes(const onnx::GraphProto& graph, const std::vector<std::string>& names);

// Runs both graphs on every set of `samples` in one runtime process, at once, and folds each
// set's values there with the registered fold `fold` (runtime::PairFold: the values never
// cross to npucc, and one set's are held at a time); a run per batch the samples are read in
// (all of them when held). `each` gets each run's result, in order. The two sides' names
// must be the same (a fold pairs the graphs' outputs by position). Returns the runtime runs
// made: each graph's session counts once per run. Throws npucc::Error from the runtime or
// the fold.
using FoldCallback = std::function<void(std::string_view result)>;
int64_t fold_values(runtime::GraphRuntime& runtime, const ProbeSide& reference,
                    const ProbeSide& candidate, const Samples& samples, const std::string& fold,
                    const FoldCallback& each);

// One graph alone (the activation-range rule reads the high graph's values only): `each`
// gets each set's values, in side.names' order. Returns the runtime runs made (one per run).
using GraphProbeCallback = std::function<void(int64_t set, const runtime::TensorSet& values)>;
int64_t probe_graph(runtime::GraphRuntime& runtime, const ProbeSide& side, const Samples& samples,
                    const GraphProbeCallback& each, uint64_t set_bytes = 0,
                    uint64_t run_bytes = k_probe_run_bytes);

} // namespace npucc::accuracy
