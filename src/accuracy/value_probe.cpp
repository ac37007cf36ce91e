#include "accuracy/value_probe.h"

#include "npucc/error.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace npucc::accuracy {

namespace {

// A Cast's target type (the emulation's low copies have no value_info); else 0.
int32_t cast_type(const onnx::NodeProto& node) {
  if (node.op_type() != "Cast" || !node.domain().empty()) {
    return 0;
  }
  for (const auto& attribute : node.attribute()) {
    if (attribute.name() == "to") {
      return static_cast<int32_t>(attribute.i());
    }
  }
  return 0;
}

// Every value the main graph defines, with its element type when the graph states it.
std::unordered_map<std::string, int32_t> defined_values(const onnx::GraphProto& graph) {
  std::unordered_map<std::string, int32_t> types;
  for (const auto& node : graph.node()) {
    for (const auto& output : node.output()) {
      types.emplace(output, cast_type(node));
    }
  }
  for (const auto& init : graph.initializer()) {
    types[init.name()] = init.data_type();
  }
  auto typed = [&](const onnx::ValueInfoProto& value) {
    if (value.type().has_tensor_type()) {
      types[value.name()] = value.type().tensor_type().elem_type();
    }
  };
  std::for_each(graph.input().begin(), graph.input().end(), typed);
  std::for_each(graph.value_info().begin(), graph.value_info().end(), typed);
  std::for_each(graph.output().begin(), graph.output().end(), typed);
  return types;
}

uint64_t bytes_of(const runtime::TensorSet& set) {
  uint64_t bytes = 0;
  for (const auto& tensor : set) {
    bytes += tensor.bytes.size();
  }
  return bytes;
}

std::vector<runtime::TensorSet> sets_between(const Samples& samples, size_t first, size_t last) {
  if (samples.held()) {
    return {samples.sets.begin() + static_cast<std::ptrdiff_t>(first),
            samples.sets.begin() + static_cast<std::ptrdiff_t>(last)};
  }
  return samples.load(first, last);
}

} // namespace

void expose_values(onnx::ModelProto& model, const std::vector<std::string>& names) {
  auto& graph = *model.mutable_graph();
  const auto types = defined_values(graph);
  std::unordered_set<std::string> outputs;
  for (const auto& output : graph.output()) {
    outputs.insert(output.name());
  }
  for (const auto& name : names) {
    auto found = types.find(name);
    if (found == types.end()) {
      throw Error("value '" + name + "' is not defined in the main graph of '" +
                      model.graph().name() + "': it cannot be read as an output",
                  "name a node output, input or initializer of the main graph");
    }
    if (!outputs.insert(name).second) {
      continue;
    }
    auto* output = graph.add_output();
    output->set_name(name);
    output->mutable_type()->mutable_tensor_type()->set_elem_type(
        found->second != 0 ? found->second : onnx::TensorProto::FLOAT);
  }
}

uint64_t stated_bytes(const onnx::GraphProto& graph, const std::vector<std::string>& names) {
  std::unordered_map<std::string, const onnx::ValueInfoProto*> stated;
  for (const auto* list : {&graph.value_info(), &graph.output()}) {
    for (const auto& value : *list) {
      stated.emplace(value.name(), &value);
    }
  }
  uint64_t bytes = 0;
  for (const auto& name : names) {
    auto found = stated.find(name);
    if (found == stated.end() || !found->second->type().tensor_type().has_shape()) {
      return 0;
    }
    const auto& tensor = found->second->type().tensor_type();
    uint64_t size = runtime::element_size(tensor.elem_type());
    if (size == 0) {
      return 0;
    }
    for (const auto& dim : tensor.shape().dim()) {
      if (!dim.has_dim_value() || dim.dim_value() < 0) {
        return 0;
      }
      size *= static_cast<uint64_t>(dim.dim_value());
    }
    bytes += size;
  }
  return bytes;
}

namespace {

// Sets [first, last) run by `run` (its runtime runs returned), as many at a time as
// `run_bytes` allows once a run has shown what one set's values weigh; each set's values
// (per side) handed to `each`.
using RunSets = std::function<std::vector<std::vector<runtime::TensorSet>>(
    const std::vector<runtime::TensorSet>& sets)>;
using EachSet = std::function<void(int64_t set, const std::vector<const runtime::TensorSet*>&)>;

int64_t batched(const Samples& samples, const RunSets& run, int64_t runs_per_batch,
                const EachSet& each, uint64_t set_bytes, uint64_t run_bytes) {
  int64_t runs = 0;
  // Unknown: the first run measures one set's weight.
  size_t per_run = set_bytes == 0 ? 1 : std::max<uint64_t>(1, run_bytes / set_bytes);
  // The samples' own batches bound what is read at once (the sets' inputs weigh too).
  const auto read_batches = samples.batches();
  size_t batch = 0;
  for (size_t first = 0; first < samples.count();) {
    while (batch + 1 < read_batches.size() && read_batches[batch].second <= first) {
      ++batch;
    }
    const size_t last = std::min({samples.count(), first + per_run, read_batches[batch].second});
    const auto results = run(sets_between(samples, first, last));
    runs += runs_per_batch;
    uint64_t heaviest = 1;
    for (size_t s = 0; s < results[0].size(); ++s) {
      std::vector<const runtime::TensorSet*> sides;
      uint64_t bytes = 0;
      for (const auto& side : results) {
        sides.push_back(&side[s]);
        bytes += bytes_of(side[s]);
      }
      heaviest = std::max(heaviest, bytes);
      each(static_cast<int64_t>(first + s), sides);
    }
    per_run = std::max<uint64_t>(1, run_bytes / heaviest);
    first = last;
  }
  return runs;
}

} // namespace

int64_t fold_values(runtime::GraphRuntime& runtime, const ProbeSide& reference,
                    const ProbeSide& candidate, const Samples& samples, const std::string& fold,
                    const FoldCallback& each) {
  if (reference.names != candidate.names) {
    throw Error("internal error: a value fold pairs " + std::to_string(reference.names.size()) +
                    " values of " + reference.what + " with " +
                    std::to_string(candidate.names.size()) + " others of " + candidate.what,
                "please report this");
  }
  int64_t runs = 0;
  for (const auto& [first, last] : samples.batches()) {
    each(runtime.run_folded(fold, {reference.what, reference.source},
                            {candidate.what, candidate.source}, sets_between(samples, first, last),
                            reference.names));
    runs += 2;
  }
  return runs;
}

int64_t probe_graph(runtime::GraphRuntime& runtime, const ProbeSide& side, const Samples& samples,
                    const GraphProbeCallback& each, uint64_t set_bytes, uint64_t run_bytes) {
  return batched(
      samples,
      [&](const std::vector<runtime::TensorSet>& sets) {
        return std::vector<std::vector<runtime::TensorSet>>{
            runtime.run(side.what, side.source, sets, side.names)};
      },
      1, [&](int64_t set, const auto& sides) { each(set, *sides[0]); }, set_bytes, run_bytes);
}

} // namespace npucc::accuracy
