#include "model/shape_check.h"

#include "model/graph_walk.h"
#include "model/tensor_info.h"
#include "npucc/error.h"
#include "util/strings.h"

#include <unordered_set>

namespace npucc::model {

std::string shape_text(const onnx::TensorShapeProto& shape) {
  std::vector<std::string> dims;
  for (const auto& dim : shape.dim()) {
    dims.push_back(dim.has_dim_value() ? std::to_string(dim.dim_value())
                                       : (dim.has_dim_param() ? dim.dim_param() : "?"));
  }
  return "[" + util::join(dims, ", ") + "]";
}

namespace {

void check_tensor_type(const onnx::TypeProto_Tensor& tensor, const std::string& what,
                       const ReadLimits& limits) {
  if (!tensor.has_shape()) {
    return;
  }
  // Dynamic dims count as 1: the limit applies to what is already known.
  uint64_t bytes = std::max<uint64_t>(element_size(tensor.elem_type()), 1);
  bool overflow = false;
  for (const auto& dim : tensor.shape().dim()) {
    if (!dim.has_dim_value()) {
      continue;
    }
    if (dim.dim_value() < 0) {
      throw Error(what + " has a negative dimension " + std::to_string(dim.dim_value()) + " in " +
                      shape_text(tensor.shape()),
                  "a dynamic dimension is written as a name (dim_param), not a negative number");
    }
    auto next = checked_mul(bytes, static_cast<uint64_t>(dim.dim_value()));
    overflow = overflow || !next;
    bytes = next.value_or(bytes);
  }
  if (overflow || bytes > limits.max_tensor_bytes) {
    throw Error(what + " has shape " + shape_text(tensor.shape()) + " of " +
                    dtype_name(tensor.elem_type()) +
                    (overflow ? ", whose size overflows" : ", " + util::format_bytes(bytes)) +
                    ", more than the limit of " + util::format_bytes(limits.max_tensor_bytes) +
                    " per tensor",
                "the model is damaged or hostile; check its dims or the --input-shape values");
  }
}

// Walks through sequence/optional/map element types down to the tensors.
void check_type(const onnx::TypeProto& type, const std::string& what, const ReadLimits& limits,
                int depth = 0) {
  if (depth > 16) {
    throw Error(what + " has a type nested more than 16 levels deep");
  }
  if (type.has_tensor_type()) {
    check_tensor_type(type.tensor_type(), what, limits);
  } else if (type.has_sequence_type()) {
    check_type(type.sequence_type().elem_type(), what, limits, depth + 1);
  } else if (type.has_optional_type()) {
    check_type(type.optional_type().elem_type(), what, limits, depth + 1);
  } else if (type.has_map_type()) {
    check_type(type.map_type().value_type(), what, limits, depth + 1);
  }
}

void check_unique(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& values,
                  const std::string& where, const std::string& kind) {
  std::unordered_set<std::string> seen;
  for (const auto& value : values) {
    if (!seen.insert(value.name()).second) {
      throw Error(where + ": " + kind + " \"" + value.name() + "\" is listed twice",
                  "each graph " + kind + " needs a unique name");
    }
  }
}

} // namespace

void check_value_shapes(const onnx::GraphProto& graph, const std::string& file,
                        const ReadLimits& limits) {
  for_each_graph(graph, [&](const onnx::GraphProto& g, int depth) {
    const std::string where = depth == 0 ? file : file + ": subgraph \"" + g.name() + "\"";
    check_unique(g.input(), where, "input");
    check_unique(g.output(), where, "output");
    for (const auto& value : g.input()) {
      check_type(value.type(), where + ": input \"" + value.name() + "\"", limits);
    }
    for (const auto& value : g.output()) {
      check_type(value.type(), where + ": output \"" + value.name() + "\"", limits);
    }
    for (const auto& value : g.value_info()) {
      check_type(value.type(), where + ": value \"" + value.name() + "\"", limits);
    }
  });
}

} // namespace npucc::model
