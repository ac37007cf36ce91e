#include "passes/pass_manager.h"

#include "model/graph_walk.h"
#include "util/test_point.h"

namespace npucc::passes {

namespace {

constexpr int k_max_rounds = 8;

void add_types(const onnx::GraphProto& graph, GraphContext& context) {
  auto& types = context.elem_types;
  auto add_value = [&](const onnx::ValueInfoProto& value) {
    if (value.type().has_tensor_type() && value.type().tensor_type().elem_type() != 0) {
      types[value.name()] = value.type().tensor_type().elem_type();
    }
    if (value.type().has_tensor_type() && value.type().tensor_type().has_shape()) {
      std::vector<int64_t> dims;
      for (const auto& dim : value.type().tensor_type().shape().dim()) {
        dims.push_back(dim.has_dim_value() && dim.dim_value() >= 0 ? dim.dim_value() : -1);
      }
      context.shapes[value.name()] = std::move(dims);
    } else {
      // A name defined here shadows an outer one of unknown shape.
      context.shapes.erase(value.name());
    }
  };
  // Sized once: every value of a large graph goes in, and rehashing twice per doubling
  // showed in profiles (add_types runs for every pass, every round).
  size_t values = static_cast<size_t>(graph.input_size() + graph.output_size() +
                                      graph.value_info_size() + graph.initializer_size());
  types.reserve(types.size() + values);
  context.shapes.reserve(context.shapes.size() + values);
  std::unordered_set<std::string> overridable;
  for (const auto& value : graph.input()) {
    add_value(value);
    overridable.insert(value.name());
  }
  for (const auto& value : graph.output()) {
    add_value(value);
  }
  for (const auto& value : graph.value_info()) {
    add_value(value);
  }
  for (const auto& tensor : graph.initializer()) {
    types[tensor.name()] = tensor.data_type();
    // An initializer that is also a graph input can be fed with another shape.
    if (overridable.count(tensor.name()) == 0) {
      context.shapes[tensor.name()] = {tensor.dims().begin(), tensor.dims().end()};
    }
  }
}

bool is_loop_body_owner(const onnx::NodeProto& node) {
  return node.op_type() == "Loop" || node.op_type() == "Scan";
}

// The pass on every graph of the model, each with the context of where it sits.
int64_t run_on_graph_tree(Pass& pass, onnx::GraphProto& graph, GraphContext context) {
  int64_t changed = 0;
  auto visit = [&](onnx::GraphProto& each, GraphContext& here) {
    add_types(each, here);
    changed += pass.run_on_graph(each, here);
  };
  // Most graphs have no bodies: then the context (every name's type and shape) is
  // neither copied nor extended, which cost more than most passes themselves.
  auto open = [](const onnx::GraphProto& each, GraphContext& inner) {
    inner.depth += 1;
    for (const auto& name : model::defined_names(each)) {
      inner.outer_names.insert(name);
    }
  };
  auto enter = [](const onnx::NodeProto& owner, const onnx::GraphProto&, GraphContext& body) {
    body.in_loop_body = body.in_loop_body || is_loop_body_owner(owner);
  };
  model::walk_graphs(graph, std::move(context), visit, open, enter);
  return changed;
}

} // namespace

bool any_changed(const std::vector<PassReport>& reports) {
  for (const auto& report : reports) {
    if (report.changed != 0) {
      return true;
    }
  }
  return false;
}

void add_reports(std::vector<PassReport>& total, const std::vector<PassReport>& more) {
  for (size_t i = 0; i < total.size() && i < more.size(); ++i) {
    total[i].changed += more[i].changed;
  }
}

int64_t PassManager::run_pass(Pass& pass, onnx::ModelProto& model) {
  util::test_point((std::string("pass:") + pass.name()).c_str());
  if (pass.is_model_pass()) {
    return pass.run_on_model(model);
  }
  GraphContext context;
  context.model = &model;
  return run_on_graph_tree(pass, *model.mutable_graph(), std::move(context));
}

std::vector<PassReport> PassManager::run(onnx::ModelProto& model, FixedPoint fixed_point,
                                         const std::function<void(const std::string&)>& log) {
  std::vector<PassReport> reports;
  for (const auto& pass : m_passes) {
    reports.push_back({pass->name(), pass->unit(), 0});
  }
  for (int round = 1; round <= k_max_rounds; ++round) {
    int64_t round_changes = 0;
    for (size_t i = 0; i < m_passes.size(); ++i) {
      int64_t changed = run_pass(*m_passes[i], model);
      reports[i].changed += changed;
      round_changes += changed;
      if (log && changed > 0) {
        log("pass " + reports[i].name + " (round " + std::to_string(round) +
            "): " + std::to_string(changed) + " " + reports[i].unit);
      }
    }
    if (fixed_point == FixedPoint::no || round_changes == 0) {
      break;
    }
  }
  return reports;
}

} // namespace npucc::passes
