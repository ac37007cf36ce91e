#pragma once
// A structure-aware mutator for the model-reader target (libprotobuf-mutator is not
// packaged in Debian 12): when the input parses as a ModelProto it changes one thing
// a model author or an attacker could (an op type, an edge, an attribute value, a
// dim, a type, a tensor's dims, an opset version, a node added or removed) and
// re-serializes, so mutations reach the checker, shape inference and passes instead
// of dying in the protobuf parser. Otherwise it falls back to libFuzzer's bytes.

#include <cstdint>
#include <cstring>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <random>
#include <string>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace npucc::fuzz {

inline const std::vector<std::string>& op_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const auto& schema : onnx::OpSchemaRegistry::get_all_schemas()) {
      all.push_back(schema.Name());
    }
    return all;
  }();
  return names;
}

inline int64_t interesting_int(std::mt19937_64& random) {
  static const int64_t values[] = {-1,
                                   0,
                                   1,
                                   2,
                                   3,
                                   -2,
                                   7,
                                   64,
                                   1 << 16,
                                   int64_t{1} << 31,
                                   int64_t{1} << 40,
                                   INT64_MAX,
                                   INT64_MIN,
                                   -(int64_t{1} << 31)};
  return values[random() % (sizeof(values) / sizeof(values[0]))];
}

inline std::string some_name(const onnx::GraphProto& graph, std::mt19937_64& random) {
  std::vector<const std::string*> names;
  for (const auto& input : graph.input()) {
    names.push_back(&input.name());
  }
  for (const auto& node : graph.node()) {
    for (const auto& output : node.output()) {
      names.push_back(&output);
    }
  }
  if (names.empty() || random() % 8 == 0) {
    return random() % 2 ? "" : "fuzz_" + std::to_string(random() % 4);
  }
  return *names[random() % names.size()];
}

inline void mutate_type(onnx::TypeProto& type, std::mt19937_64& random) {
  auto* tensor = type.mutable_tensor_type();
  switch (random() % 4) {
  case 0:
    tensor->set_elem_type(static_cast<int32_t>(random() % 18));
    break;
  case 1:
    tensor->clear_shape();
    break;
  case 2:
    tensor->mutable_shape()->add_dim()->set_dim_value(interesting_int(random));
    break;
  default:
    if (tensor->shape().dim_size() > 0) {
      auto* dim = tensor->mutable_shape()->mutable_dim(
          static_cast<int>(random() % static_cast<uint64_t>(tensor->shape().dim_size())));
      if (random() % 3 == 0) {
        dim->set_dim_param("N");
      } else {
        dim->set_dim_value(interesting_int(random));
      }
    }
  }
}

inline void mutate_attribute(onnx::AttributeProto& attribute, std::mt19937_64& random) {
  if (attribute.ints_size() > 0 && random() % 2) {
    attribute.set_ints(static_cast<int>(random() % static_cast<uint64_t>(attribute.ints_size())),
                       interesting_int(random));
  } else if (attribute.ints_size() > 0 && random() % 2) {
    attribute.add_ints(interesting_int(random));
  } else if (attribute.has_t()) {
    auto* tensor = attribute.mutable_t();
    tensor->add_dims(interesting_int(random));
  } else if (attribute.type() == onnx::AttributeProto::FLOAT) {
    static const float values[] = {0.0f, -1.0f, 1e30f, -1e-30f};
    attribute.set_f(values[random() % 4]);
  } else if (attribute.type() == onnx::AttributeProto::STRING) {
    attribute.set_s(random() % 2 ? "" : "NOTSET");
  } else if (attribute.has_g() && attribute.g().node_size() > 0) {
    attribute.mutable_g()->mutable_node(0)->set_op_type(op_names()[random() % op_names().size()]);
  } else {
    attribute.set_i(interesting_int(random));
    if (random() % 2) {
      attribute.set_type(static_cast<onnx::AttributeProto_AttributeType>(random() % 15));
    }
  }
}

// Moves a tensor's data to external storage in one of the files the fuzz workspace
// provides (fuzz_inputs.h: weights.bin, sub/more.bin, the escaping symlink
// outside.bin) or a hostile location, with an interesting offset and length.
inline void externalize(onnx::TensorProto& tensor, std::mt19937_64& random) {
  static const char* locations[] = {"weights.bin",
                                    "sub/more.bin",
                                    "outside.bin",
                                    "missing.bin",
                                    "../secret.bin",
                                    "/etc/hostname",
                                    "sub/../weights.bin",
                                    "",
                                    "sub"};
  static const int64_t sizes[] = {0, 4, 16, 255, 256, 4095, 4096, 4097, 10'000'000'000};
  tensor.clear_raw_data();
  tensor.clear_float_data();
  tensor.clear_int64_data();
  tensor.clear_int32_data();
  tensor.clear_double_data();
  tensor.clear_external_data();
  tensor.set_data_location(random() % 8 ? onnx::TensorProto::EXTERNAL : onnx::TensorProto::DEFAULT);
  auto add = [&](const std::string& key, const std::string& value) {
    auto* entry = tensor.add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  };
  add("location", locations[random() % (sizeof(locations) / sizeof(locations[0]))]);
  if (random() % 4) {
    add("offset", std::to_string(sizes[random() % (sizeof(sizes) / sizeof(sizes[0]))]));
  }
  if (random() % 4) {
    add("length", random() % 8
                      ? std::to_string(sizes[random() % (sizeof(sizes) / sizeof(sizes[0]))])
                      : std::string("-1"));
  }
  if (random() % 16 == 0) {
    add("checksum", "0");
  }
}

inline void mutate_model(onnx::ModelProto& model, std::mt19937_64& random) {
  auto& graph = *model.mutable_graph();
  auto pick = [&](int count) { return static_cast<int>(random() % static_cast<uint64_t>(count)); };
  onnx::NodeProto* node =
      graph.node_size() > 0 ? graph.mutable_node(pick(graph.node_size())) : nullptr;
  switch (random() % 11) {
  case 0:
    if (node) {
      node->set_op_type(op_names()[random() % op_names().size()]);
    }
    break;
  case 1:
    if (node && node->input_size() > 0) {
      node->set_input(pick(node->input_size()), some_name(graph, random));
    } else if (node) {
      node->add_input(some_name(graph, random));
    }
    break;
  case 2:
    if (node && node->attribute_size() > 0) {
      mutate_attribute(*node->mutable_attribute(pick(node->attribute_size())), random);
    }
    break;
  case 3: {
    int values = graph.input_size() + graph.output_size() + graph.value_info_size();
    if (values > 0) {
      int index = pick(values);
      auto* value =
          index < graph.input_size() ? graph.mutable_input(index)
          : index < graph.input_size() + graph.output_size()
              ? graph.mutable_output(index - graph.input_size())
              : graph.mutable_value_info(index - graph.input_size() - graph.output_size());
      mutate_type(*value->mutable_type(), random);
    }
    break;
  }
  case 4:
    if (graph.initializer_size() > 0) {
      auto* tensor = graph.mutable_initializer(pick(graph.initializer_size()));
      if (random() % 2 && tensor->dims_size() > 0) {
        tensor->set_dims(pick(tensor->dims_size()), interesting_int(random));
      } else {
        tensor->set_data_type(static_cast<int32_t>(random() % 18));
      }
    }
    break;
  case 5:
    if (node) {
      *graph.add_node() = *node; // a second producer, or a copy elsewhere in the order
    }
    break;
  case 6:
    if (graph.node_size() > 0) {
      graph.mutable_node()->DeleteSubrange(pick(graph.node_size()), 1);
    }
    break;
  case 7:
    if (model.opset_import_size() > 0) {
      model.mutable_opset_import(0)->set_version(1 + static_cast<int64_t>(random() % 17));
    }
    break;
  case 9:
    if (graph.initializer_size() > 0) {
      externalize(*graph.mutable_initializer(pick(graph.initializer_size())), random);
    }
    break;
  case 8:
    if (node) {
      if (node->output_size() > 0 && random() % 2) {
        node->set_output(pick(node->output_size()), some_name(graph, random));
      } else {
        node->add_output("fuzz_out_" + std::to_string(random() % 4));
      }
    }
    break;
  default:
    if (node) {
      auto* attribute = node->add_attribute();
      attribute->set_name(random() % 2 ? "axis" : "perm");
      attribute->set_type(random() % 2 ? onnx::AttributeProto::INT : onnx::AttributeProto::INTS);
      attribute->set_i(interesting_int(random));
      attribute->add_ints(interesting_int(random));
    }
  }
}

} // namespace npucc::fuzz

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  std::mt19937_64 random(seed);
  onnx::ModelProto model;
  if (random() % 5 == 0 || !model.ParseFromArray(data, static_cast<int>(size)) ||
      !model.has_graph()) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  int steps = 1 + static_cast<int>(random() % 3);
  for (int i = 0; i < steps; ++i) {
    npucc::fuzz::mutate_model(model, random);
  }
  std::string bytes = model.SerializeAsString();
  if (bytes.size() > max_size) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  std::memcpy(data, bytes.data(), bytes.size());
  return bytes.size();
}
