#include "precision/mixed_precision.h"

#include "model/graph_walk.h"
#include "model/tensor_info.h"
#include "npucc/error.h"
#include "precision/fusion_guards.h"
#include "precision/rewrite_state.h"
#include "util/strings.h"

#include <unordered_map>

namespace npucc::precision {

// Reasons a float node keeps its type (RewriteReport::kept_reasons):
//   deny_list, deny_propagation, inputs_float32 (infer/clear op with no low input),
//   not_listed, schema (the op's schema at this opset has no low type for a slot, or ties
//   a pinned float32 input to a lowered one), shape_arithmetic, overflow (reads a constant
//   that would overflow), graph_output (keeps the graph's output types), keep_dtype,
//   accuracy (the accuracy repair measured that the target needs it float32),
//   control_flow (If/Loop/Scan keep their interface; their bodies are painted),
//   type_from_attribute (Cast, Constant, ConstantOfShape, Range, random ops),
//   other_domain, no_schema, runtime_workaround (a runtime fails on the low form although
//   ONNX allows it: runtime_workarounds.cpp), input_type_unknown (an input no inference
//   could type, such as a custom op's output: it may be float32, and gets no Cast).

int32_t low_elem_type(LowPrecision low) {
  return low == LowPrecision::float16 ? onnx::TensorProto::FLOAT16 : onnx::TensorProto::BFLOAT16;
}

namespace {

using detail::Scope;

void collect_names(const onnx::GraphProto& root, std::unordered_set<std::string>& names,
                   std::vector<std::string>& node_names) {
  model::for_each_graph(root, [&](const onnx::GraphProto& graph, int) {
    for (const auto& value : graph.input()) {
      names.insert(value.name());
    }
    for (const auto& init : graph.initializer()) {
      names.insert(init.name());
    }
    for (const auto& node : graph.node()) {
      names.insert(node.name());
      if (!node.name().empty()) {
        node_names.push_back(node.name());
      }
      for (const auto& output : node.output()) {
        names.insert(output);
      }
    }
  });
}

void check_keep_nodes(const std::set<std::string>& keep,
                      const std::vector<std::string>& node_names) {
  std::unordered_set<std::string> known(node_names.begin(), node_names.end());
  for (const auto& name : keep) {
    if (known.count(name) == 0) {
      std::string suggestion = util::closest_match(name, node_names);
      throw usage_error("--keep-dtype: the model has no node named \"" + name + "\"" +
                            (suggestion.empty() ? "" : "; did you mean \"" + suggestion + "\"?"),
                        "list node names (NodeProto.name) one per line; `npucc inspect --nodes "
                        "MODEL` prints them");
    }
  }
}

// Every value the rewrite made low, in every body: a Cast back to float32 reads one of them.
std::unordered_set<std::string> low_values(const Scope& scope, int32_t low) {
  std::unordered_set<std::string> names;
  for (const auto& [name, tensor] : scope.tensors) {
    if (tensor.final_type == low) {
      names.insert(name);
    }
  }
  for (const auto& child : scope.children) {
    names.merge(low_values(*child, low));
  }
  return names;
}

// Constants kept float32, by name, with their reason (decide_constants): a Constant
// node's reason is its value's.
using ConstantReasons = std::unordered_map<std::string, std::string>;

void count_nodes(Scope& scope, detail::Context& context, const ConstantReasons& constants) {
  auto& report = *context.report;
  for (int i = 0; i < scope.graph->node_size(); ++i) {
    const auto& node = scope.graph->node(i);
    const auto& state = scope.nodes[static_cast<size_t>(i)];
    std::string precision = "n/a";
    std::string reason = state.has_float ? state.kept_reason : "no_float";
    if (node.op_type() == "Constant" && node.domain().empty()) {
      // Not compute: its value's type, as decided for the constant.
      const detail::Tensor* value = scope.find(node.output(0));
      precision =
          value != nullptr && value->final_type != 0 ? model::dtype_name(value->final_type) : "n/a";
      auto kept = constants.find(node.output(0));
      if (precision == "float32") {
        reason = kept != constants.end() ? kept->second : "consumers_float32";
      } else {
        reason = precision == "n/a" ? "no_float" : "";
      }
    } else if (state.low) {
      precision = model::dtype_name(context.low);
      reason.clear();
    } else if (state.has_float) {
      precision = "float32";
      ++report.kept_reasons[state.kept_reason];
    }
    ++report.nodes[node.op_type()][precision];
    const auto& ranges = context.options->range_nodes;
    auto range = reason == "activation_range" ? ranges.find(node.name()) : ranges.end();
    report.node_precisions.push_back({node.name(), node.op_type(),
                                      node.output_size() > 0 ? node.output(0) : std::string(),
                                      precision, reason,
                                      range != ranges.end() ? range->second : std::string(),
                                      state.low && context.options->lowered_nodes.count(
                                                       node.name()) != 0});
  }
  for (auto& child : scope.children) {
    count_nodes(*child, context, constants);
  }
}

} // namespace

RewriteReport rewrite_mixed_precision(onnx::ModelProto& model, const RewriteOptions& options) {
  RewriteReport report;
  detail::Context context;
  context.model = &model;
  context.options = &options;
  context.low = low_elem_type(options.low);
  context.report = &report;
  report.low_type = model::dtype_name(context.low);
  std::vector<std::string> node_names;
  collect_names(model.graph(), context.taken_names, node_names);
  check_keep_nodes(options.keep_nodes, node_names);
  check_keep_nodes(options.accuracy_nodes, node_names);

  auto root = detail::build_and_paint(*model.mutable_graph(), context);
  detail::decide_constants(*root, context);
  // Before any Cast is added: the report describes the model's own nodes.
  ConstantReasons constant_reasons;
  for (const auto& constant : report.float32_constants) {
    constant_reasons.emplace(constant.name, constant.reason);
  }
  count_nodes(*root, context, constant_reasons);
  detail::convert_constants(*root, context);
  detail::set_low_attributes(*root);
  detail::insert_casts(*root, context);
  report.fusion_guards = detail::guard_layer_norm_inputs(
      *model.mutable_graph(), low_values(*root, context.low),
      [&](const std::string& base) { return context.unique_name(base); });
  return report;
}

} // namespace npucc::precision
