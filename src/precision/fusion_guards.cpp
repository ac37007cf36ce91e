// Guarding the inputs of decomposed layer norms: ONNX Runtime's LayerNormFusion (from level
// "basic" at opset 18 and later, "extended" before) turns ReduceMean/Sub/Pow/ReduceMean/Add/
// Sqrt/Div/Mul/Add into one LayerNormalization node, and when the ReduceMean's input comes
// from a Cast read only by the pattern, it drops that Cast and feeds the Cast's input to the
// fused node (the Apex O2 case: LayerNormalization computes in float whatever its input type).
// Where that input is low and the pattern's scale and bias float32, the fused node binds T to
// two types ("Type parameter (T) of Optype (LayerNormalization) bound to different types":
// a float16 low graph of an opset-22 model with a decomposed layer norm), and where it is
// bfloat16 ORT 1.30's CPU has no LayerNormalization kernel for it ("Failed to find kernel for
// LayerNormalization(1) ... Version mismatch": a bfloat16 emulation graph). A single-input Max
// between the Cast and the pattern is a copy that ORT does not eliminate (an Identity it
// does), so the fusion sees a float32 input and keeps the Cast.

#include "precision/fusion_guards.h"

#include "model/graph_walk.h"
#include "passes/node_rewriter.h"

namespace npucc::precision::detail {

namespace {

onnx::NodeProto guard(const std::string& input, const std::string& output,
                      const std::string& name) {
  onnx::NodeProto node;
  node.set_op_type("Max");
  node.set_name(name);
  node.add_input(input);
  node.add_output(output);
  node.set_doc_string("a copy: keeps ONNX Runtime's LayerNormFusion from dropping the Cast "
                      "before it and fusing a low-precision input with float32 scale and bias "
                      "(npucc, precision/fusion_guards.cpp)");
  return node;
}

std::unordered_set<std::string> reduce_mean_inputs(const onnx::GraphProto& graph) {
  std::unordered_set<std::string> reduced;
  for (const auto& node : graph.node()) {
    if (node.op_type() == "ReduceMean" && node.domain().empty() && node.input_size() > 0) {
      reduced.insert(node.input(0));
    }
  }
  return reduced;
}

} // namespace

bool is_cast_to(const onnx::NodeProto& node, int32_t to) {
  if (node.op_type() != "Cast" || !(node.domain().empty() || node.domain() == "ai.onnx") ||
      node.input_size() != 1 || node.output_size() != 1) {
    return false;
  }
  for (const auto& attribute : node.attribute()) {
    if (attribute.name() == "to") {
      return attribute.i() == to;
    }
  }
  return false;
}

int64_t guard_layer_norm_inputs(onnx::GraphProto& root,
                                const std::unordered_set<std::string>& low_values,
                                const std::function<std::string(const std::string&)>& unique) {
  int64_t guards = 0;
  model::for_each_graph(root, [&](onnx::GraphProto& graph, int) {
    const auto reduced = reduce_mean_inputs(graph);
    guards += passes::rewrite_nodes(graph, [&](onnx::NodeProto& node, int) {
      const bool guarded = is_cast_to(node, onnx::TensorProto::FLOAT) &&
                           low_values.count(node.input(0)) != 0 &&
                           reduced.count(node.output(0)) != 0;
      if (!guarded) {
        return passes::NodeEdit::keep();
      }
      // The Cast now computes `unfused`; the guard copies it to the name readers read.
      const std::string output = node.output(0);
      const std::string unfused = unique(output + "_unfused");
      node.set_output(0, unfused);
      std::vector<onnx::NodeProto> guarded_cast;
      guarded_cast.push_back(std::move(node));
      guarded_cast.push_back(guard(unfused, output, unique(output + "_fusion_guard")));
      return passes::NodeEdit::replace_with(std::move(guarded_cast));
    });
  });
  return guards;
}

} // namespace npucc::precision::detail
