#include "opset/raise_opset.h"

#include "npucc/error.h"
#include "opset/version_steps.h"
#include "schemas/registry.h"

namespace npucc::opset {

namespace {

using TypeMap = std::unordered_map<std::string, onnx::TypeProto>;

struct Raise {
  int64_t from = 0;
  int64_t target = 0;
  TypeMap types;
  std::unordered_set<std::string> taken;
  RaiseReport report;
};

bool default_domain(const std::string& domain) {
  return domain.empty() || domain == "ai.onnx";
}

void collect(const onnx::GraphProto& graph, Raise& raise) {
  for (const auto* list : {&graph.input(), &graph.value_info(), &graph.output()}) {
    for (const auto& value : *list) {
      raise.types[value.name()] = value.type();
      raise.taken.insert(value.name());
    }
  }
  for (const auto& init : graph.initializer()) {
    auto& type = raise.types[init.name()];
    type.mutable_tensor_type()->set_elem_type(init.data_type());
    auto* shape = type.mutable_tensor_type()->mutable_shape();
    shape->Clear();
    for (int64_t dim : init.dims()) {
      shape->add_dim()->set_dim_value(dim);
    }
    raise.taken.insert(init.name());
  }
  for (const auto& node : graph.node()) {
    raise.taken.insert(node.name());
    raise.taken.insert(node.output().begin(), node.output().end());
    for (const auto& attribute : node.attribute()) {
      if (attribute.has_g()) {
        collect(attribute.g(), raise);
      }
      for (const auto& body : attribute.graphs()) {
        collect(body, raise);
      }
    }
  }
}

void raise_graph(onnx::GraphProto& graph, Raise& raise);

// Carries one node across every version of its op in (from, target].
void raise_node(onnx::NodeProto& node, Raise& raise, AdaptContext& context) {
  for (auto& attribute : *node.mutable_attribute()) {
    if (attribute.has_g()) {
      raise_graph(*attribute.mutable_g(), raise);
    }
    for (auto& body : *attribute.mutable_graphs()) {
      raise_graph(body, raise);
    }
  }
  if (!default_domain(node.domain())) {
    return;
  }
  const auto* before = schemas::find_schema(node.op_type(), static_cast<int>(raise.from), "");
  if (before == nullptr) {
    context.from = raise.from;
    context.version = raise.target;
    context.refuse(node, "npucc has no schema for it at opset " + std::to_string(raise.from));
  }
  for (int64_t version = raise.from + 1; version <= raise.target; ++version) {
    const auto* after = schemas::find_schema(node.op_type(), static_cast<int>(version), "");
    if (after == nullptr || after->SinceVersion() != version) {
      continue;
    }
    context.from = before->SinceVersion();
    context.version = version;
    VersionStep step = version_step(node.op_type(), *before, *after);
    if (step.kind == StepKind::refuse) {
      context.refuse(node, step.why);
    }
    if (step.kind == StepKind::adapt) {
      const std::string op = node.op_type();
      step.adapter(node, context);
      ++raise.report.adapted[op + "-" + std::to_string(version)];
      if (node.op_type() != op) {
        // Replaced by another op (classic_steps.cpp): it goes on from that op's version here.
        after = schemas::find_schema(node.op_type(), static_cast<int>(version), "");
        if (after == nullptr) {
          context.refuse(node, "npucc has no schema for it at opset " + std::to_string(version));
        }
      }
    }
    before = after;
  }
}

void raise_graph(onnx::GraphProto& graph, Raise& raise) {
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (auto& node : *graph.mutable_node()) {
    AdaptContext context;
    context.taken = &raise.taken;
    context.types = &raise.types;
    context.target = raise.target;
    raise_node(node, raise, context);
    for (auto& made : context.before) {
      *nodes.Add() = std::move(made);
    }
    *nodes.Add() = std::move(node);
    for (auto& made : context.after) {
      *nodes.Add() = std::move(made);
    }
  }
  graph.mutable_node()->Swap(&nodes);
}

void refuse_local_functions(const onnx::ModelProto& model, int64_t target) {
  for (const auto& function : model.functions()) {
    for (const auto& opset : function.opset_import()) {
      if (default_domain(opset.domain()) && opset.version() != target) {
        throw Error("--target-opset " + std::to_string(target) + ": model-local function \"" +
                        function.name() + "\" imports ai.onnx " + std::to_string(opset.version()) +
                        ", and npucc does not raise functions",
                    "compile without --target-opset");
      }
    }
  }
}

} // namespace

int64_t default_opset(const onnx::ModelProto& model) {
  for (const auto& opset : model.opset_import()) {
    if (default_domain(opset.domain())) {
      return opset.version();
    }
  }
  return 0;
}

int64_t ir_version_for_opset(int64_t opset) {
  // ONNX's releases (research/onnx/versions-table.md): the first opset of each IR version.
  static const std::vector<std::pair<int64_t, int64_t>> first_opset = {
      {9, 4}, {10, 5}, {11, 6}, {12, 7}, {15, 8}, {19, 9}, {21, 10}, {23, 11}, {24, 12}, {25, 13}};
  int64_t ir = 3;
  for (const auto& [since, version] : first_opset) {
    if (opset >= since) {
      ir = version;
    }
  }
  return ir;
}

RaiseReport raise_opset(onnx::ModelProto& model, int64_t target) {
  Raise raise;
  raise.from = default_opset(model);
  raise.target = target;
  raise.report.from = raise.from;
  raise.report.to = target;
  const std::string option = "--target-opset " + std::to_string(target);
  if (target > k_max_target_opset) {
    throw usage_error(option + ": npucc raises models up to opset " +
                      std::to_string(k_max_target_opset));
  }
  if (raise.from == 0) {
    throw usage_error(option + ": the model imports no ai.onnx opset");
  }
  if (target < raise.from) {
    throw usage_error(option + ": the model is at opset " + std::to_string(raise.from) +
                      ", and npucc only raises opsets");
  }
  if (target == raise.from) {
    return raise.report;
  }
  refuse_local_functions(model, target);
  collect(model.graph(), raise);
  raise_graph(*model.mutable_graph(), raise);
  for (auto& opset : *model.mutable_opset_import()) {
    if (default_domain(opset.domain())) {
      opset.set_version(target);
    }
  }
  model.set_ir_version(std::max<int64_t>(model.ir_version(), ir_version_for_opset(target)));
  return raise.report;
}

} // namespace npucc::opset
