#include "model/model_checks.h"

#include "model/graph_walk.h"
#include "model/newer_types.h"
#include "model/shape_check.h"
#include "model/tensor_info.h"
#include "npucc/error.h"

#include <algorithm>
#include <limits>

// The structural checks every model read passes, whichever way its bytes were read
// (model_reader.cpp): versions, nesting, tensor sizes, sparse tensors, value shapes.
namespace npucc::model {

namespace {

// Iterative, so a hostile depth is measured without recursing on it. Also bounds the
// names every subgraph sees from its enclosing graphs, summed over subgraphs: ONNX's
// checker and the passes copy that scope per subgraph, so 20000 If nodes in a
// 20000-node graph would take hours, not seconds.
void check_nesting(const onnx::GraphProto& root, const std::string& file,
                   const ReadLimits& limits) {
  struct PendingGraph {
    const onnx::GraphProto* graph;
    int depth;
    uint64_t outer_names;
  };
  std::vector<PendingGraph> stack{{&root, 0, 0}};
  uint64_t scope_names = 0;
  uint64_t subgraphs = 0;
  while (!stack.empty()) {
    auto [graph, depth, outer_names] = stack.back();
    stack.pop_back();
    uint64_t visible = outer_names + static_cast<uint64_t>(graph->input_size()) +
                       static_cast<uint64_t>(graph->initializer_size());
    for (const auto& node : graph->node()) {
      visible += static_cast<uint64_t>(node.output_size());
    }
    for (int i = 0; i < graph->node_size(); ++i) {
      const auto& node = graph->node(i);
      for (const auto* sub : subgraphs_of(node)) {
        if (depth + 1 > limits.max_subgraph_depth) {
          throw Error(file + ": subgraphs are nested more than " +
                          std::to_string(limits.max_subgraph_depth) + " levels deep (at " +
                          describe_node(node, i) + ")",
                      "the model is damaged or hostile; real models nest a few levels");
        }
        ++subgraphs;
        scope_names += visible;
        if (scope_names > limits.max_subgraph_scope_names) {
          throw Error(file + ": " + std::to_string(subgraphs) + "+ subgraphs see more than " +
                          std::to_string(limits.max_subgraph_scope_names) +
                          " outer names in all (" + std::to_string(visible) + " at " +
                          describe_node(node, i) + "); checking it would take hours",
                      "the model is damaged or hostile; real models have a few subgraphs");
        }
        stack.push_back({sub, depth + 1, visible});
      }
    }
  }
}

void check_versions(const onnx::ModelProto& proto, const std::string& file) {
  if (proto.ir_version() <= 0) {
    throw Error(file + ": model has no ir_version; not an ONNX model, or a damaged one");
  }
  if (proto.ir_version() > k_max_ir_version) {
    throw Error(file + ": IR version " + std::to_string(proto.ir_version()) +
                    " is newer than npucc supports (IR version <= " +
                    std::to_string(k_max_ir_version) + ")",
                "re-export the model with ir_version <= " + std::to_string(k_max_ir_version) +
                    " and opset <= " + std::to_string(k_max_default_opset));
  }
  for (const auto& opset : proto.opset_import()) {
    const std::string& domain = opset.domain();
    int64_t limit = -1;
    if (domain.empty() || domain == "ai.onnx") {
      limit = k_max_default_opset;
    } else if (domain == "ai.onnx.ml") {
      limit = k_max_ml_opset;
    } else if (domain == "ai.onnx.training" || domain == "ai.onnx.preview.training") {
      limit = k_max_training_opset;
    }
    if (opset.version() <= 0 && limit > 0) {
      throw Error(file + ": opset import for domain \"" + domain + "\" has invalid version " +
                  std::to_string(opset.version()));
    }
    if (limit > 0 && opset.version() > limit) {
      throw Error(file + ": opset " + std::to_string(opset.version()) + " of domain \"" +
                      (domain.empty() ? "ai.onnx" : domain) +
                      "\" is newer than npucc supports (at most " + std::to_string(limit) + ")",
                  "re-export the model with opset <= " + std::to_string(limit));
    }
  }
  if (proto.ir_version() >= 3 && proto.opset_import_size() == 0) {
    throw Error(file + ": model imports no opset", "add an opset_import for the default domain");
  }
}

// How many elements a tensor's typed fields hold (float16 sits in int32_data, one each).
uint64_t typed_elements(const onnx::TensorProto& tensor) {
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
    return tensor.float_data_size();
  case onnx::TensorProto::COMPLEX64:
    return tensor.float_data_size() / 2;
  case onnx::TensorProto::DOUBLE:
    return tensor.double_data_size();
  case onnx::TensorProto::COMPLEX128:
    return tensor.double_data_size() / 2;
  case onnx::TensorProto::INT64:
    return tensor.int64_data_size();
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64:
    return tensor.uint64_data_size();
  default:
    return tensor.int32_data_size();
  }
}

// Every stored tensor must hold exactly what its dims declare, and fit the limit;
// this refuses "a tensor of 2^40 elements with 4 bytes of data" before anyone
// allocates for it.
void check_tensor_size(onnx::TensorProto& tensor, const std::string& what, const ReadLimits& limits,
                       std::optional<uint64_t> left_out) {
  // ONNX 1.12's enum ends at bfloat16; the newer types are known to npucc (tensor_info.h).
  if (!is_known_type(tensor.data_type())) {
    throw Error(what + " has invalid data type " + std::to_string(tensor.data_type()));
  }
  auto count = element_count(tensor);
  if (!count) {
    throw Error(what + " has a negative dimension or an element count that overflows");
  }
  if (element_bits(tensor.data_type()) == 0) {
    return; // strings: variable size, checked by the ONNX checker
  }
  auto bytes = data_bytes(tensor);
  if (!bytes || *bytes > limits.max_tensor_bytes) {
    throw Error(what + " declares " + std::to_string(*count) +
                    " elements, more than the limit of " + std::to_string(limits.max_tensor_bytes) +
                    " bytes per tensor",
                "the model is damaged or hostile; check the tensor's dims");
  }
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    return; // checked when the external data is resolved
  }
  if (left_out && *left_out != *bytes) {
    throw Error(what + " of type " + dtype_name(tensor.data_type()) + " declares " +
                std::to_string(*bytes) + " bytes of data but holds " + std::to_string(*left_out));
  }
  if (left_out) {
    return;
  }
  move_newer_type_values_to_raw(tensor, what);
  if (tensor.has_raw_data() && stored_bytes(tensor) != *bytes) {
    throw Error(what + " of type " + dtype_name(tensor.data_type()) + " declares " +
                std::to_string(*bytes) + " bytes of data but holds " +
                std::to_string(stored_bytes(tensor)));
  }
  // Typed fields pack some types wider (float16 in int32_data), so compare elements.
  if (!tensor.has_raw_data() && typed_elements(tensor) != *count) {
    throw Error(what + " declares " + std::to_string(*count) + " elements but holds " +
                std::to_string(typed_elements(tensor)));
  }
}

void check_tensor_sizes(onnx::ModelProto& proto, const std::string& file, const ReadLimits& limits,
                        const LeftOutBytes& left_out) {
  auto check = [&](onnx::TensorProto& tensor) {
    auto held = left_out.find(&tensor);
    check_tensor_size(tensor, file + ": tensor \"" + tensor.name() + "\"", limits,
                      held == left_out.end() ? std::nullopt : std::optional(held->second));
  };
  for_each_tensor(*proto.mutable_graph(), check);
  for_each_function_tensor(proto, check);
}

// A sparse tensor stores few values but stands for its dense dims, which consumers
// (checkers, runtimes) may materialise: the dense size must fit the limit too.
void check_sparse_tensor(const onnx::SparseTensorProto& sparse, const std::string& file,
                         const ReadLimits& limits) {
  check_sparse_element_type(sparse, file + ": sparse tensor \"" + sparse.values().name() + "\"");
  uint64_t bytes = std::max<uint64_t>(element_size(sparse.values().data_type()), 1);
  for (int64_t dim : sparse.dims()) {
    auto next = dim < 0 ? std::nullopt : checked_mul(bytes, static_cast<uint64_t>(dim));
    if (!next || *next > limits.max_tensor_bytes) {
      throw Error(file + ": sparse tensor \"" + sparse.values().name() +
                      "\" has dense dims over the limit of " +
                      std::to_string(limits.max_tensor_bytes) +
                      " bytes per tensor (or a negative dim)",
                  "the model is damaged or hostile; check the tensor's dims");
    }
    bytes = *next;
  }
}

void check_sparse_tensors(const onnx::GraphProto& root, const std::string& file,
                          const ReadLimits& limits) {
  for_each_graph(root, [&](const onnx::GraphProto& graph, int) {
    for (const auto& sparse : graph.sparse_initializer()) {
      check_sparse_tensor(sparse, file, limits);
    }
    for (const auto& node : graph.node()) {
      for (const auto& attribute : node.attribute()) {
        if (attribute.has_sparse_tensor()) {
          check_sparse_tensor(attribute.sparse_tensor(), file, limits);
        }
        for (const auto& sparse : attribute.sparse_tensors()) {
          check_sparse_tensor(sparse, file, limits);
        }
      }
    }
  });
}

} // namespace

void check_file_size(uint64_t size, const std::string& file, const ReadLimits& limits) {
  if (size > static_cast<uint64_t>(std::numeric_limits<int>::max())) {
    throw Error(file + ": " + std::to_string(size) +
                    " bytes is more than one protobuf message can hold (2 GiB)",
                "store the weights as external data (onnx.save(..., save_as_external_data=True))");
  }
  if (size > limits.max_memory_bytes) {
    throw Error(file + ": " + std::to_string(size) + " bytes is over the memory limit of " +
                    std::to_string(limits.max_memory_bytes) + " bytes",
                "raise the limit with --max-memory");
  }
}

void check_structure(onnx::ModelProto& proto, const std::string& file, const ReadLimits& limits,
                     const LeftOutBytes& left_out) {
  if (!proto.has_graph()) {
    throw Error(file + ": not an ONNX model: it has no graph");
  }
  check_versions(proto, file);
  check_nesting(proto.graph(), file, limits);
  check_tensor_sizes(proto, file, limits, left_out);
  check_sparse_tensors(proto.graph(), file, limits);
  check_value_shapes(proto.graph(), file, limits);
}

} // namespace npucc::model
