#include "precision/emulation.h"

#include "model/graph_walk.h"
#include "npucc/error.h"
#include "precision/emulation_casts.h"
#include "precision/schema_check.h"

#include <functional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace npucc::precision {

namespace {

using onnx::TensorProto;

bool is_low(int32_t type) {
  return type == TensorProto::FLOAT16 || type == TensorProto::BFLOAT16;
}

// Ops whose output type is set by an attribute: their low output is truly low in the
// emulation too, so it only needs the way back to float32.
const std::set<std::string> k_typed_by_attribute = {
    "Cast",         "Constant",      "ConstantOfShape",  "EyeLike",
    "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
};

struct Emulator {
  std::unordered_set<std::string> taken;
  int64_t round_trips = 0;
  std::set<int32_t> low_types; // the types the round trips go through
  detail::RoundTrips trips;

  std::string unique(const std::string& base) {
    std::string name = base;
    for (int n = 1; taken.count(name) != 0; ++n) {
      name = base + "_" + std::to_string(n);
    }
    taken.insert(name);
    return name;
  }

  onnx::NodeProto cast(const std::string& input, const std::string& output, int32_t to) {
    onnx::NodeProto node;
    node.set_op_type("Cast");
    node.set_name(unique(output + "_emu_cast"));
    node.add_input(input);
    node.add_output(output);
    auto* attribute = node.add_attribute();
    attribute->set_name("to");
    attribute->set_type(onnx::AttributeProto::INT);
    attribute->set_i(to);
    return node;
  }

  void emulate_graph(onnx::GraphProto& graph) {
    std::unordered_map<std::string, int32_t> types;
    for (const auto& value : graph.value_info()) {
      types[value.name()] = value.type().tensor_type().elem_type();
    }
    for (const auto& value : graph.output()) {
      types[value.name()] = value.type().tensor_type().elem_type();
    }
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (auto& input : *graph.mutable_input()) {
      int32_t type = input.type().tensor_type().elem_type();
      if (!input.type().has_tensor_type() || !is_low(type)) {
        continue;
      }
      // Readers move to the round trip's end first, so its own Cast keeps the input.
      std::string low = unique(input.name() + "_emu_low");
      std::string back = unique(input.name() + "_emu");
      model::rename_reads(graph, input.name(), back);
      input.mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
      *nodes.Add() = cast(input.name(), low, type);
      *nodes.Add() = cast(low, back, TensorProto::FLOAT);
      trips[back] = {low, type};
      low_types.insert(type);
      ++round_trips;
    }
    for (auto& init : *graph.mutable_initializer()) {
      if (!is_low(init.data_type())) {
        continue;
      }
      std::string name = init.name();
      init.set_name(unique(name + "_emu_low"));
      *nodes.Add() = cast(init.name(), name, TensorProto::FLOAT);
      trips[name] = {init.name(), init.data_type()};
      low_types.insert(init.data_type());
      ++round_trips;
    }
    for (auto& node : *graph.mutable_node()) {
      std::vector<onnx::NodeProto> after;
      const bool typed = node.domain().empty() && k_typed_by_attribute.count(node.op_type()) != 0;
      for (auto& output : *node.mutable_output()) {
        auto it = types.find(output);
        if (output.empty() || it == types.end() || !is_low(it->second)) {
          continue;
        }
        std::string name = output;
        if (typed) {
          output = unique(name + "_emu_low");
          after.push_back(cast(output, name, TensorProto::FLOAT));
          trips[name] = {output, it->second};
        } else {
          output = unique(name + "_emu_f32");
          std::string low = unique(name + "_emu_low");
          after.push_back(cast(output, low, it->second));
          after.push_back(cast(low, name, TensorProto::FLOAT));
          trips[name] = {low, it->second};
        }
        low_types.insert(it->second);
        ++round_trips;
      }
      *nodes.Add() = std::move(node);
      for (auto& extra : after) {
        *nodes.Add() = std::move(extra);
      }
    }
    graph.mutable_node()->Swap(&nodes);
    // Every value the low graph typed low is float32 now; inference fills in the rest.
    graph.clear_value_info();
    for (auto& output : *graph.mutable_output()) {
      if (output.type().has_tensor_type() && is_low(output.type().tensor_type().elem_type())) {
        output.mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
      }
    }
  }
};

// Cast to and from bfloat16 exists from opset 13 only: a graph that holds bfloat16 values
// at an earlier opset has no float32 emulation.
void refuse_unsupported_casts(const onnx::ModelProto& model, const std::set<int32_t>& low_types) {
  onnx::NodeProto cast;
  cast.set_op_type("Cast");
  const onnx::OpSchema* schema = find_schema(cast, model);
  for (int32_t low : low_types) {
    if (schema != nullptr && schema_accepts(*schema, {TensorProto::FLOAT}, {low}) &&
        schema_accepts(*schema, {low}, {TensorProto::FLOAT})) {
      continue;
    }
    const std::string name = low == TensorProto::BFLOAT16 ? "bfloat16" : "float16";
    std::string opset = "?";
    for (const auto& entry : model.opset_import()) {
      if (entry.domain().empty() || entry.domain() == "ai.onnx") {
        opset = std::to_string(entry.version());
      }
    }
    throw Error("--emit-emulation: the low graph holds " + name + " values, and Cast to or from " +
                    name + " is not defined at the model's opset " + opset,
                "convert the model to opset 13 or later, or leave out --emit-emulation");
  }
}

} // namespace

EmulationResult make_emulation(onnx::ModelProto& model) {
  Emulator emulator;
  model::for_each_graph(model.graph(), [&](const onnx::GraphProto& graph, int) {
    for (const auto& value : graph.input()) {
      emulator.taken.insert(value.name());
    }
    for (const auto& init : graph.initializer()) {
      emulator.taken.insert(init.name());
    }
    for (const auto& node : graph.node()) {
      emulator.taken.insert(node.name());
      for (const auto& output : node.output()) {
        emulator.taken.insert(output);
      }
    }
  });
  // Collect the graphs first: emulate_graph rebuilds node lists, moving the bodies.
  std::vector<onnx::GraphProto*> graphs;
  model::for_each_graph(*model.mutable_graph(),
                        [&](onnx::GraphProto& graph, int) { graphs.push_back(&graph); });
  // Inner graphs first, so their parents' node moves do not invalidate the pointers.
  for (auto it = graphs.rbegin(); it != graphs.rend(); ++it) {
    emulator.emulate_graph(**it);
  }
  refuse_unsupported_casts(model, emulator.low_types);
  detail::read_low_copies(*model.mutable_graph(), emulator.trips);
  const int64_t guards = detail::guard_bfloat16_layer_norm_inputs(
      *model.mutable_graph(), emulator.trips,
      [&](const std::string& base) { return emulator.unique(base); });
  return {emulator.round_trips, guards};
}

} // namespace npucc::precision
