#include "output/message_stream.h"

#include "model/graph_walk.h"
#include "model/onnx_fields.h"
#include "model/wire_source.h"

namespace npucc::output {

using namespace model::onnx_fields; // model/onnx_fields.h

StoredBytes stored_bytes(const onnx::TensorProto& tensor) {
  if (auto typed = model::typed_slice(tensor)) {
    return {std::string_view(), std::nullopt, typed, typed->values.raw_length()};
  }
  std::string_view bytes = *model::raw_bytes(tensor);
  return {bytes, model::mapped_slice(tensor), std::nullopt, bytes.size()};
}

bool StoredBytes::same_as(const StoredBytes& other) const {
  if (slice && other.slice) {
    return slice->file == other.slice->file && slice->offset == other.slice->offset &&
           slice->length == other.slice->length;
  }
  if (typed && other.typed) {
    return typed->file == other.typed->file && typed->values.begin == other.typed->values.begin;
  }
  return !typed && !other.typed && bytes.data() == other.bytes.data() &&
         bytes.size() == other.bytes.size();
}

void write_stored(HashedFile& file, const StoredBytes& stored) {
  if (stored.typed) {
    model::decode_typed_slice(*stored.typed, [&](std::string_view block) {
      file.write(block);
      return true;
    });
  } else if (stored.slice) {
    file.write(*stored.slice);
  } else {
    file.write(stored.bytes);
  }
}

std::string varint(uint64_t value) {
  std::string out;
  model::put_varint(out, value);
  return out;
}

void MessageStream::append(std::string bytes) {
  m_size += bytes.size();
  if (!m_segments.empty() && !m_segments.back().stored) {
    m_segments.back().literal += bytes;
  } else {
    m_segments.push_back({std::move(bytes), std::nullopt});
  }
}

void MessageStream::append(const StoredBytes& stored) {
  m_size += stored.size;
  m_segments.push_back({std::string(), stored});
}

void MessageStream::append_field(uint32_t number, const MessageStream& child) {
  append(varint((uint64_t{number} << 3) | 2) + varint(child.size()));
  for (const auto& segment : child.m_segments) {
    if (segment.stored) {
      append(*segment.stored);
    } else {
      append(segment.literal);
    }
  }
}

void MessageStream::write_to(HashedFile& file) const {
  for (const auto& segment : m_segments) {
    if (segment.stored) {
      write_stored(file, *segment.stored);
    } else {
      file.write(segment.literal);
    }
  }
}

namespace {

// Whether a tensor in `graph` (at any depth; sparse tensors aside, which the writer
// copies) or below `node` is a table reference.
bool holds_stored(onnx::GraphProto& graph) {
  bool found = false;
  model::for_each_tensor(
      graph, [&](onnx::TensorProto& tensor) { found = found || model::is_stored(tensor); },
      model::SparseTensors::skip);
  return found;
}

bool holds_stored(onnx::NodeProto& node) {
  for (const auto& attribute : node.attribute()) {
    if (attribute.has_t() && model::is_stored(attribute.t())) {
      return true;
    }
    for (const auto& tensor : attribute.tensors()) {
      if (model::is_stored(tensor)) {
        return true;
      }
    }
  }
  for (auto* graph : model::subgraphs_of(node)) {
    if (holds_stored(*graph)) {
      return true;
    }
  }
  return false;
}

MessageStream literal(const google::protobuf::MessageLite& message) {
  MessageStream stream;
  stream.append(message.SerializeAsString());
  return stream;
}

MessageStream stream_tensor(const onnx::TensorProto& tensor) {
  if (!model::is_stored(tensor)) {
    return literal(tensor);
  }
  onnx::TensorProto meta = tensor; // a reference: metadata only
  meta.clear_external_data();
  meta.clear_data_location();
  MessageStream stream = literal(meta);
  StoredBytes stored = stored_bytes(tensor);
  stream.append(varint((uint64_t{k_tensor_raw_data} << 3) | 2) + varint(stored.size));
  stream.append(stored);
  return stream;
}

// The attribute's fields other than tensors and graphs, serialised with those moved
// aside (not copied).
MessageStream attribute_rest(onnx::AttributeProto& attribute) {
  onnx::TensorProto* tensor = attribute.has_t() ? attribute.release_t() : nullptr;
  onnx::GraphProto* graph = attribute.has_g() ? attribute.release_g() : nullptr;
  google::protobuf::RepeatedPtrField<onnx::TensorProto> tensors;
  google::protobuf::RepeatedPtrField<onnx::GraphProto> graphs;
  tensors.Swap(attribute.mutable_tensors());
  graphs.Swap(attribute.mutable_graphs());
  MessageStream stream = literal(attribute);
  tensors.Swap(attribute.mutable_tensors());
  graphs.Swap(attribute.mutable_graphs());
  attribute.set_allocated_t(tensor);
  attribute.set_allocated_g(graph);
  return stream;
}

MessageStream stream_attribute(onnx::AttributeProto& attribute) {
  MessageStream stream = attribute_rest(attribute);
  if (attribute.has_t()) {
    stream.append_field(k_attribute_t, stream_tensor(attribute.t()));
  }
  if (attribute.has_g()) {
    stream.append_field(k_attribute_graph, stream_graph(*attribute.mutable_g()));
  }
  for (const auto& tensor : attribute.tensors()) {
    stream.append_field(k_attribute_tensors, stream_tensor(tensor));
  }
  for (auto& graph : *attribute.mutable_graphs()) {
    stream.append_field(k_attribute_graphs, stream_graph(graph));
  }
  return stream;
}

MessageStream stream_node(onnx::NodeProto& node) {
  if (!holds_stored(node)) {
    return literal(node);
  }
  google::protobuf::RepeatedPtrField<onnx::AttributeProto> attributes;
  attributes.Swap(node.mutable_attribute());
  MessageStream stream = literal(node);
  attributes.Swap(node.mutable_attribute());
  for (auto& attribute : *node.mutable_attribute()) {
    stream.append_field(k_node_attribute, stream_attribute(attribute));
  }
  return stream;
}

} // namespace

MessageStream stream_graph(onnx::GraphProto& graph) {
  if (!holds_stored(graph)) {
    return literal(graph);
  }
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  google::protobuf::RepeatedPtrField<onnx::TensorProto> initializers;
  nodes.Swap(graph.mutable_node());
  initializers.Swap(graph.mutable_initializer());
  MessageStream stream = literal(graph);
  nodes.Swap(graph.mutable_node());
  initializers.Swap(graph.mutable_initializer());
  for (auto& node : *graph.mutable_node()) {
    stream.append_field(k_graph_node, stream_node(node));
  }
  for (const auto& tensor : graph.initializer()) {
    stream.append_field(k_graph_initializer, stream_tensor(tensor));
  }
  return stream;
}

} // namespace npucc::output
