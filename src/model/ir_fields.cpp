#include "model/ir_fields.h"

#include "model/graph_walk.h"
#include "npucc/error.h"

#include <google/protobuf/unknown_field_set.h>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace npucc::model {

namespace {

using google::protobuf::UnknownField;
using google::protobuf::UnknownFieldSet;

// The last occurrence wins for a singular field, as when protobuf parses a known one.
std::string last_string(const UnknownFieldSet& fields, int number) {
  std::string value;
  for (int i = 0; i < fields.field_count(); ++i) {
    const UnknownField& field = fields.field(i);
    if (field.number() == number && field.type() == UnknownField::TYPE_LENGTH_DELIMITED) {
      value = field.length_delimited();
    }
  }
  return value;
}

// Cast nodes by their output and by their input, per graph.
struct CastLinks {
  std::unordered_map<std::string, std::string> input_of;        // cast output -> input
  std::unordered_multimap<std::string, std::string> outputs_of; // cast input -> outputs
};

// Over every graph: a body's node may read an outer value through an outer Cast.
CastLinks cast_links(const onnx::GraphProto& root) {
  CastLinks links;
  for_each_graph(root, [&](const onnx::GraphProto& graph, int) {
    for (const auto& node : graph.node()) {
      if (node.op_type() == "Cast" && (node.domain().empty() || node.domain() == "ai.onnx") &&
          node.input_size() == 1 && node.output_size() == 1) {
        links.input_of[node.output(0)] = node.input(0);
        links.outputs_of.emplace(node.input(0), node.output(0));
      }
    }
  });
  return links;
}

// Whether `from` reaches `target` through Casts: upstream for an input, downstream for an
// output. Bounded: a chain of Casts is a few long.
bool reaches_upstream(const CastLinks& links, std::string from, const std::string& target) {
  for (int step = 0; step < 8; ++step) {
    auto it = links.input_of.find(from);
    if (it == links.input_of.end()) {
      return false;
    }
    from = it->second;
    if (from == target) {
      return true;
    }
  }
  return false;
}

bool reaches_downstream(const CastLinks& links, const std::string& from, const std::string& target,
                        int depth = 0) {
  if (depth >= 8) {
    return false;
  }
  auto [begin, end] = links.outputs_of.equal_range(from);
  for (auto it = begin; it != end; ++it) {
    if (it->second == target || reaches_downstream(links, it->second, target, depth + 1)) {
      return true;
    }
  }
  return false;
}

// The node's own name for a sharded tensor: itself, a Cast-linked input or output, or "".
std::string counterpart(const onnx::NodeProto& node, const CastLinks& links,
                        const std::string& tensor) {
  for (const auto& input : node.input()) {
    if (input == tensor || (!input.empty() && reaches_upstream(links, input, tensor))) {
      return input;
    }
  }
  for (const auto& output : node.output()) {
    if (output == tensor || (!output.empty() && reaches_downstream(links, output, tensor))) {
      return output;
    }
  }
  return "";
}

// One NodeDeviceConfigurationProto (configuration_id 1, sharding_spec 2, pipeline_stage
// 3); each ShardingSpecProto's tensor_name is its field 1. Rewritten only when a spec
// changes, so untouched configurations keep their bytes.
std::string fix_configuration(const std::string& bytes, const onnx::NodeProto& node,
                              const CastLinks& links, int64_t& dropped) {
  UnknownFieldSet config;
  if (!config.ParseFromString(bytes)) {
    return bytes; // not ours to judge: carried as it came
  }
  bool changed = false;
  for (int i = 0; i < config.field_count(); ++i) {
    UnknownField* field = config.mutable_field(i);
    if (field->number() != 2 || field->type() != UnknownField::TYPE_LENGTH_DELIMITED) {
      continue;
    }
    UnknownFieldSet spec;
    if (!spec.ParseFromString(field->length_delimited())) {
      continue;
    }
    const std::string tensor = last_string(spec, 1);
    const std::string now = counterpart(node, links, tensor);
    if (now == tensor) {
      continue;
    }
    changed = true;
    if (now.empty()) {
      config.DeleteSubrange(i, 1);
      --i;
      ++dropped;
      continue;
    }
    spec.DeleteByNumber(1);
    UnknownFieldSet renamed;
    renamed.AddLengthDelimited(1, now);
    renamed.MergeFrom(spec);
    std::string out;
    renamed.SerializeToString(&out);
    field->set_length_delimited(out);
  }
  if (!changed) {
    return bytes;
  }
  std::string out;
  config.SerializeToString(&out);
  return out;
}

} // namespace

std::string overload_of(const onnx::NodeProto& node) {
  return last_string(node.GetReflection()->GetUnknownFields(node), ir_field::k_node_overload);
}

std::string overload_of(const onnx::FunctionProto& function) {
  return last_string(function.GetReflection()->GetUnknownFields(function),
                     ir_field::k_function_overload);
}

std::vector<onnx::AttributeProto> attribute_defaults(const onnx::FunctionProto& function) {
  std::vector<onnx::AttributeProto> defaults;
  const auto& fields = function.GetReflection()->GetUnknownFields(function);
  for (int i = 0; i < fields.field_count(); ++i) {
    const UnknownField& field = fields.field(i);
    if (field.number() != ir_field::k_function_attribute_proto) {
      continue;
    }
    onnx::AttributeProto attribute;
    if (field.type() != UnknownField::TYPE_LENGTH_DELIMITED ||
        !attribute.ParseFromString(field.length_delimited()) || attribute.name().empty()) {
      throw Error("function \"" + function.domain() + "." + function.name() +
                  "\": an attribute_proto entry is malformed");
    }
    defaults.push_back(std::move(attribute));
  }
  return defaults;
}

void carry_value_info_fields(const onnx::GraphProto& from, onnx::GraphProto& to) {
  std::vector<const onnx::GraphProto*> sources;
  for_each_graph(from, [&](const onnx::GraphProto& g, int) { sources.push_back(&g); });
  size_t index = 0;
  for_each_graph(to, [&](onnx::GraphProto& g, int) {
    if (index >= sources.size()) {
      return;
    }
    const onnx::GraphProto& source = *sources[index++];
    if (source.name() != g.name()) {
      return; // not the same graph after all: nothing is carried rather than misplaced
    }
    std::unordered_map<std::string, const onnx::ValueInfoProto*> annotated;
    for (const auto& value : source.value_info()) {
      if (value.unknown_fields().field_count() > 0) {
        annotated[value.name()] = &value;
      }
    }
    for (auto& value : *g.mutable_value_info()) {
      auto it = annotated.find(value.name());
      if (it != annotated.end() && value.unknown_fields().field_count() == 0) {
        value.mutable_unknown_fields()->MergeFrom(it->second->unknown_fields());
      }
    }
  });
}

int64_t fix_device_configurations(onnx::GraphProto& root) {
  int64_t dropped = 0;
  std::optional<CastLinks> links; // built for the first annotated node only
  for_each_graph(root, [&](onnx::GraphProto& graph, int) {
    for (auto& node : *graph.mutable_node()) {
      auto* fields = node.GetReflection()->MutableUnknownFields(&node);
      for (int i = 0; i < fields->field_count(); ++i) {
        UnknownField* field = fields->mutable_field(i);
        if (field->number() != ir_field::k_node_device_configurations ||
            field->type() != UnknownField::TYPE_LENGTH_DELIMITED) {
          continue;
        }
        if (!links) {
          links = cast_links(root);
        }
        std::string fixed = fix_configuration(field->length_delimited(), node, *links, dropped);
        if (fixed != field->length_delimited()) {
          field->set_length_delimited(fixed);
        }
      }
    }
  });
  return dropped;
}

} // namespace npucc::model
