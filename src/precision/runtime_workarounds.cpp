// Part of phase 1 of the mixed-precision rewrite (paint.cpp): nodes kept float32 because a
// runtime fails on the low graph as it would be written, although ONNX allows it. Each
// entry names the runtime and the exact pattern; the report counts these nodes under
// "runtime_workaround".
//
// ONNX Runtime 1.30 (CPU) crashes with a segfault while optimising at level "all" a
// Transpose that moves the batch axis, followed by a Cast, followed by a MatMul: it fuses
// them into a FusedMatMul with transBatchA/transBatchB. A float16 Transpose read by a MatMul
// always takes that form there: npucc casts before a float32 MatMul, and ORT itself casts
// around a float16 MatMul (its CPU MatMul has no float16 kernel). The same Transpose in
// float32, with the Cast after it, runs. A torch LSTM's batch_first output (perm [1, 0, 2])
// read by a Linear layer is the common case.

#include "precision/rewrite_state.h"

namespace npucc::precision::detail {

namespace {

// The permutations ORT folds into FusedMatMul's transBatch: [1, ..., R-2, 0, R-1], alone or
// with the last two axes swapped as well ([1, ..., R-2, R-1, 0]); rank 3 or more.
bool moves_batch_axis(const std::vector<int64_t>& perm) {
  const size_t rank = perm.size();
  if (rank < 3) {
    return false;
  }
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (perm[i] != static_cast<int64_t>(i + 1)) {
      return false;
    }
  }
  const auto last = static_cast<int64_t>(rank - 1);
  return (perm[rank - 2] == 0 && perm[rank - 1] == last) ||
         (perm[rank - 2] == last && perm[rank - 1] == 0);
}

std::vector<int64_t> perm_of(const onnx::NodeProto& node) {
  for (const auto& attribute : node.attribute()) {
    if (attribute.name() == "perm") {
      return {attribute.ints().begin(), attribute.ints().end()};
    }
  }
  return {}; // the default (reversed axes) never moves the batch axis alone
}

bool is_onnx(const onnx::NodeProto& node, const char* op_type) {
  return node.op_type() == op_type && (node.domain().empty() || node.domain() == "ai.onnx");
}

} // namespace

void mark_runtime_workarounds(Scope& scope) {
  const auto& graph = *scope.graph;
  std::unordered_set<std::string> matmul_inputs;
  for (const auto& node : graph.node()) {
    if (is_onnx(node, "MatMul")) {
      matmul_inputs.insert(node.input().begin(), node.input().end());
    }
  }
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    auto& state = scope.nodes[static_cast<size_t>(i)];
    if (!is_onnx(node, "Transpose") || !state.has_float || !state.forced.empty() ||
        node.output_size() != 1 || matmul_inputs.count(node.output(0)) == 0 ||
        !moves_batch_axis(perm_of(node))) {
      continue;
    }
    state.forced = "runtime_workaround";
  }
}

} // namespace npucc::precision::detail
