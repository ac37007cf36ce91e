#include "accuracy/body_probe.h"

#include "npucc/error.h"

namespace npucc::accuracy {

namespace {

using onnx::TensorProto;

// The element type `graph` states for `name`, else a Cast's `to`, else float32.
int32_t body_value_type(const onnx::GraphProto& graph, const std::string& name) {
  for (const auto* list : {&graph.value_info(), &graph.output(), &graph.input()}) {
    for (const auto& value : *list) {
      if (value.name() == name && value.type().tensor_type().elem_type() != 0) {
        return value.type().tensor_type().elem_type();
      }
    }
  }
  for (const auto& node : graph.node()) {
    if (node.op_type() != "Cast" || node.output_size() == 0 || node.output(0) != name) {
      continue;
    }
    for (const auto& attribute : node.attribute()) {
      if (attribute.name() == "to") {
        return static_cast<int32_t>(attribute.i());
      }
    }
  }
  return TensorProto::FLOAT;
}

onnx::NodeProto* owner_in(onnx::GraphProto& graph, const BodyStep& step) {
  for (auto& node : *graph.mutable_node()) {
    if (node.output_size() > 0 && node.output(0) == step.owner) {
      return &node;
    }
  }
  throw Error("no node with output '" + step.owner + "' holds the body " + step.attribute +
                  " the drift report reads",
              "please report this");
}

onnx::GraphProto* body_of(onnx::NodeProto& owner, const std::string& attribute) {
  for (auto& candidate : *owner.mutable_attribute()) {
    if (candidate.name() == attribute && candidate.has_g()) {
      return candidate.mutable_g();
    }
  }
  return nullptr;
}

void add_typed_output(onnx::GraphProto& graph, const std::string& name, int32_t type) {
  auto* output = graph.add_output();
  output->set_name(name);
  output->mutable_type()->mutable_tensor_type()->set_elem_type(type);
}

// `from` (defined in `body`) as `name`, a new output of `body`.
void output_from(onnx::GraphProto& body, const std::string& from, const std::string& name,
                 int32_t type) {
  auto* node = body.add_node();
  node->set_op_type("Identity");
  node->set_name(name);
  node->add_input(from);
  node->add_output(name);
  add_typed_output(body, name, type);
}

// An empty tensor of `type` as `name`, a new output of `branch`: what an If's other branch
// gives.
void empty_output(onnx::GraphProto& branch, const std::string& name, int32_t type) {
  auto* node = branch.add_node();
  node->set_op_type("Constant");
  node->set_name(name);
  node->add_output(name);
  auto* attribute = node->add_attribute();
  attribute->set_name("value");
  attribute->set_type(onnx::AttributeProto::TENSOR);
  attribute->mutable_t()->set_data_type(type);
  attribute->mutable_t()->add_dims(0);
  add_typed_output(branch, name, type);
}

// A Scan's per-output attributes, when it states them, cover the new scan output too.
void extend_scan_attributes(onnx::NodeProto& scan) {
  for (auto& attribute : *scan.mutable_attribute()) {
    if (attribute.name() == "scan_output_axes" || attribute.name() == "scan_output_directions") {
      attribute.add_ints(0);
    }
  }
}

// One level: `inner` (defined in the body `step` names) leaves it as `outer`, a new output
// of the owner in `parent`.
void lift(onnx::GraphProto& parent, const BodyStep& step, const std::string& inner,
          const std::string& outer, int32_t type) {
  auto* owner = owner_in(parent, step);
  auto* body = body_of(*owner, step.attribute);
  if (body == nullptr) {
    throw Error("node '" + step.owner_name + "' has no body " + step.attribute,
                "please report this");
  }
  const std::string carried = outer + "/" + step.attribute;
  output_from(*body, inner, carried, type);
  if (step.owner_op == "If") {
    const std::string other = step.attribute == "then_branch" ? "else_branch" : "then_branch";
    auto* sibling = body_of(*owner, other);
    if (sibling == nullptr) {
      throw Error("If node '" + step.owner_name + "' has no " + other, "please report this");
    }
    empty_output(*sibling, carried, type);
  } else if (step.owner_op == "Scan") {
    extend_scan_attributes(*owner);
  }
  owner->add_output(outer);
}

} // namespace

BodyStep step_into(const onnx::NodeProto& node, const std::string& attribute) {
  const std::string first_output = node.output_size() > 0 ? node.output(0) : "";
  return {first_output, node.name().empty() ? first_output : node.name(), node.op_type(),
          attribute};
}

std::string body_graph_name(const BodyPath& path) {
  std::string name = "main";
  for (const auto& step : path) {
    name += "/" + step.owner_name + ":" + step.attribute;
  }
  return name;
}

int stacked_axes(const BodyPath& path) {
  int axes = 0;
  for (const auto& step : path) {
    axes += step.owner_op == "If" ? 0 : 1;
  }
  return axes;
}

std::vector<std::string> body_output_names(const std::vector<BodyValue>& values,
                                           const std::string& prefix) {
  std::vector<std::string> names;
  for (size_t k = 0; k < values.size(); ++k) {
    names.push_back(prefix + std::to_string(k));
  }
  return names;
}

void expose_body_values(onnx::ModelProto& model, const std::vector<BodyValue>& values,
                        const std::string& prefix) {
  const auto names = body_output_names(values, prefix);
  for (size_t k = 0; k < values.size(); ++k) {
    const auto& path = values[k].path;
    // The graphs along the path, main first.
    std::vector<onnx::GraphProto*> graphs{model.mutable_graph()};
    for (const auto& step : path) {
      auto* body = body_of(*owner_in(*graphs.back(), step), step.attribute);
      if (body == nullptr) {
        throw Error("node '" + step.owner_name + "' has no body " + step.attribute,
                    "please report this");
      }
      graphs.push_back(body);
    }
    const int32_t type = body_value_type(*graphs.back(), values[k].value);
    std::string inner = values[k].value;
    for (size_t level = path.size(); level-- > 0;) {
      const std::string outer = level == 0 ? names[k] : names[k] + "/" + std::to_string(level);
      lift(*graphs[level], path[level], inner, outer, type);
      inner = outer;
    }
    add_typed_output(*model.mutable_graph(), names[k], type);
  }
}

} // namespace npucc::accuracy
