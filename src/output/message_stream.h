#pragma once

#include "output/hashed_file.h"
#include "model/weight_store.h"

#include <cstdint>
#include <onnx/onnx_pb.h>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// A serialised message whose large weights stay where the weight table holds them
// (model/weight_store.h): the message's own bytes, with each table reference's bytes
// streamed from their place when written. The writer's top-level initializers are such
// pieces; a graph holding stored tensors deeper (a Constant in an If branch, as
// PaddlePaddle's exporter writes them, or a subgraph's initializer) is one too, rather
// than a copy of its weights serialised into a string.
namespace npucc::output {

// A stored tensor's bytes as the writer takes them: a slice of a mapped file when they
// are one, typed values decoded as they are written, else the bytes themselves.
struct StoredBytes {
  std::string_view bytes;
  std::optional<model::MappedSlice> slice;
  std::optional<model::TypedSlice> typed;
  uint64_t size = 0;

  // The same bytes from the same place.
  bool same_as(const StoredBytes& other) const;
};

StoredBytes stored_bytes(const onnx::TensorProto& tensor);
void write_stored(HashedFile& file, const StoredBytes& stored);

class MessageStream {
public:
  void append(std::string bytes);
  void append(const StoredBytes& stored);
  // `child` as length-delimited field `number`.
  void append_field(uint32_t number, const MessageStream& child);
  uint64_t size() const { return m_size; }
  void write_to(HashedFile& file) const;

private:
  struct Segment {
    std::string literal;
    std::optional<StoredBytes> stored;
  };
  std::vector<Segment> m_segments;
  uint64_t m_size = 0;
};

// The varint encoding of `value`.
std::string varint(uint64_t value);

// `graph` serialised, its stored tensors at any depth streamed from the table with the
// metadata protobuf would write for them as raw_data. Without such tensors below its
// initializers, exactly the bytes SerializeAsString gives; with them, the same message
// with the fields that lead to them (nodes, attributes, subgraphs, initializers) written
// after the message's other fields, which protobuf parsers accept in any order.
MessageStream stream_graph(onnx::GraphProto& graph);

} // namespace npucc::output
