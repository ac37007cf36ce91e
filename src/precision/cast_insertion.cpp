// Phase 3 of the mixed-precision rewrite: make every input arrive in the type its node
// wants. One Cast per (value, target type), created in the graph that defines the value
// (so a body reading an outer value shares the outer Cast, and a Loop body does not cast
// the same outer value on every iteration), placed right after the producer, uniquely
// named. A wanted type that an existing widening Cast's input already has reuses that
// input instead (x16 -> Cast(float) -> Cast(float16) folds to x16: lossless).

#include "model/tensor_info.h"
#include "npucc/error.h"
#include "precision/rewrite_state.h"

namespace npucc::precision::detail {

namespace {

using onnx::TensorProto;

std::string short_type(int32_t elem_type) {
  switch (elem_type) {
  case TensorProto::FLOAT16:
    return "fp16";
  case TensorProto::BFLOAT16:
    return "bf16";
  case TensorProto::FLOAT:
    return "fp32";
  default:
    return model::dtype_name(elem_type);
  }
}

bool widens_losslessly(int32_t from, int32_t to) {
  return is_low(from) && (to == TensorProto::FLOAT || to == TensorProto::DOUBLE);
}

std::string get_cast(Tensor& tensor, int32_t target, Context& context) {
  Scope& owner = *tensor.owner;
  auto key = std::make_pair(tensor.name, target);
  auto found = owner.casts.find(key);
  if (found != owner.casts.end()) {
    return found->second;
  }
  if (tensor.source == Source::node) {
    const auto& producer = owner.graph->node(tensor.producer);
    if (producer.op_type() == "Cast" && producer.domain().empty() && producer.input_size() == 1) {
      const Tensor* source = owner.find(producer.input(0));
      if (source != nullptr && source->final_type == target &&
          widens_losslessly(source->final_type, tensor.final_type)) {
        ++context.report->casts_folded;
        owner.casts[key] = source->name;
        return source->name;
      }
    }
  }
  std::string name = context.unique_name(tensor.name + "_to_" + short_type(target));
  onnx::NodeProto cast;
  cast.set_op_type("Cast");
  cast.set_name(name);
  cast.add_input(tensor.name);
  cast.add_output(name);
  auto* to = cast.add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(target);
  if (tensor.producer >= 0) {
    owner.casts_after[static_cast<size_t>(tensor.producer)].push_back(std::move(cast));
  } else {
    owner.casts_front.push_back(std::move(cast));
  }
  if (tensor.declared) {
    auto* value = owner.graph->add_value_info();
    value->set_name(name);
    *value->mutable_type() = *tensor.declared;
    value->mutable_type()->mutable_tensor_type()->set_elem_type(target);
  }
  ++context.report->casts_inserted;
  ++context.report->casts_by_type[model::dtype_name(target)];
  owner.casts[key] = name;
  return name;
}

void set_elem_type(onnx::ValueInfoProto& value, int32_t elem_type) {
  if (value.type().has_tensor_type()) {
    value.mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
  }
}

void update_declared_types(Scope& scope, Context& context) {
  auto& graph = *scope.graph;
  const bool retype_io = scope.depth == 0 && context.options->keep_io_types == KeepIoTypes::no;
  for (auto& value : *graph.mutable_value_info()) {
    const auto it = scope.tensors.find(value.name());
    if (it != scope.tensors.end() && it->second.final_type != it->second.orig) {
      set_elem_type(value, it->second.final_type);
    }
  }
  for (auto& value : *graph.mutable_input()) {
    const Tensor& tensor = scope.tensors.at(value.name());
    if (tensor.final_type != tensor.orig && retype_io) {
      set_elem_type(value, tensor.final_type);
    }
  }
  for (auto& value : *graph.mutable_output()) {
    Tensor* tensor = scope.find(value.name());
    if (tensor == nullptr || tensor->final_type == tensor->orig) {
      continue;
    }
    if (!retype_io) {
      throw Error("internal error: precision rewrite changed the type of graph output \"" +
                  value.name() + "\"");
    }
    set_elem_type(value, tensor->final_type);
  }
}

void rebuild_node_list(Scope& scope) {
  auto& graph = *scope.graph;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  nodes.Reserve(graph.node_size() + static_cast<int>(scope.casts_front.size()));
  for (auto& cast : scope.casts_front) {
    *nodes.Add() = std::move(cast);
  }
  for (int i = 0; i < graph.node_size(); ++i) {
    *nodes.Add() = std::move(*graph.mutable_node(i));
    for (auto& cast : scope.casts_after[static_cast<size_t>(i)]) {
      *nodes.Add() = std::move(cast);
    }
  }
  graph.mutable_node()->Swap(&nodes);
}

void rewrite(Scope& scope, Context& context) {
  auto& graph = *scope.graph;
  for (int i = 0; i < graph.node_size(); ++i) {
    auto& node = *graph.mutable_node(i);
    const auto& state = scope.nodes[static_cast<size_t>(i)];
    for (int j = 0; j < node.input_size(); ++j) {
      int32_t wanted = state.wanted_in[static_cast<size_t>(j)];
      Tensor* tensor = scope.find(node.input(j));
      if (wanted == 0 || tensor == nullptr || tensor->final_type == wanted) {
        continue;
      }
      node.set_input(j, get_cast(*tensor, wanted, context));
    }
  }
  update_declared_types(scope, context);
  for (auto& child : scope.children) {
    rewrite(*child, context);
  }
  // Last: bodies may have added Casts here for the outer values they read.
  rebuild_node_list(scope);
}

} // namespace

void insert_casts(Scope& root, Context& context) {
  rewrite(root, context);
}

} // namespace npucc::precision::detail
