#include "passes/fold_shapes.h"

#include "passes/fold_values.h"
#include "passes/node_rewriter.h"
#include "passes/op_version.h"
#include "passes/rename.h"

#include <algorithm>

namespace npucc::passes {

namespace {

// The versions of Shape and Size read against ONNX's Changelog (op_version.h): those of
// opsets 19-25 only widen the input types.
bool checked_version(const onnx::NodeProto& node, const onnx::ModelProto* model) {
  if (node.op_type() == "Shape") {
    return version_is_one_of(node, model, {1, 13, 15, 19, 21, 23, 24, 25});
  }
  return version_is_one_of(node, model, {1, 13, 19, 21, 23, 24, 25});
}

// The value a Shape or Size node computes, when the dims it needs are static.
std::optional<FoldValue> shape_value(const onnx::NodeProto& node, const std::vector<int64_t>& dims,
                                     int version) {
  FoldValue value;
  value.type = onnx::TensorProto::INT64;
  auto rank = static_cast<int64_t>(dims.size());
  if (node.op_type() == "Size") {
    int64_t count = 1;
    for (int64_t dim : dims) {
      if (dim < 0 || __builtin_mul_overflow(count, dim, &count)) {
        return std::nullopt;
      }
    }
    value.ints = {count};
    return value;
  }
  int64_t start = 0;
  int64_t end = rank;
  for (const auto& attribute : node.attribute()) {
    if (version < 15 || attribute.type() != onnx::AttributeProto::INT) {
      return std::nullopt;
    }
    if (attribute.name() == "start") {
      start = attribute.i();
    } else if (attribute.name() == "end") {
      end = attribute.i();
    } else {
      return std::nullopt;
    }
  }
  // Negative bounds count from the back; both are then clamped to [0, rank].
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  for (int64_t d = start; d < end; ++d) {
    if (dims[static_cast<size_t>(d)] < 0) {
      return std::nullopt;
    }
    value.ints.push_back(dims[static_cast<size_t>(d)]);
  }
  value.dims = {static_cast<int64_t>(value.ints.size())};
  return value;
}

} // namespace

int64_t FoldShapes::run_on_graph(onnx::GraphProto& graph, const GraphContext& context) {
  // Before IR 4 every initializer must also be a graph input.
  if (context.in_loop_body || context.model == nullptr || context.model->ir_version() < 4) {
    return 0;
  }
  std::unordered_set<std::string> keep; // graph outputs stay computed by nodes
  for (const auto& value : graph.output()) {
    keep.insert(value.name());
  }
  // A name this graph computes, but has no local shape for, may shadow an outer
  // name whose shape the context holds: leave it.
  std::unordered_set<std::string> local_shapes;
  for (const auto* list : {&graph.input(), &graph.output(), &graph.value_info()}) {
    for (const auto& value : *list) {
      local_shapes.insert(value.name());
    }
  }
  std::unordered_set<std::string> computed;
  for (const auto& node : graph.node()) {
    computed.insert(node.output().begin(), node.output().end());
  }
  std::unordered_set<std::string> removed;
  const int64_t count = rewrite_nodes(graph, [&](onnx::NodeProto& node, int) {
    if (!is_onnx_node(node) || (node.op_type() != "Shape" && node.op_type() != "Size") ||
        node.input_size() != 1 || node.output_size() != 1 || node.output(0).empty() ||
        keep.count(node.output(0)) != 0 || !checked_version(node, context.model)) {
      return NodeEdit::keep();
    }
    const std::string& source = node.input(0);
    const auto* dims = context.shape(source);
    if (dims == nullptr || (computed.count(source) != 0 && local_shapes.count(source) == 0)) {
      return NodeEdit::keep();
    }
    auto value = shape_value(node, *dims, op_version(node, context.model));
    if (!value) {
      return NodeEdit::keep();
    }
    *graph.add_initializer() = to_tensor(*value, node.output(0));
    removed.insert(node.output(0));
    return NodeEdit::remove();
  });
  drop_value_info(graph, removed);
  return count;
}

} // namespace npucc::passes
