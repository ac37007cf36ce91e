#pragma once

#include "output/write_control.h"
#include "npucc/compile.h"
#include "npucc/file_identity.h"

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <onnx/onnx_pb.h>
#include <utility>
#include <vector>

namespace npucc::output {

// A graph as written, and each of its files as the writer left it (by file name): while a
// file still looks so, a cache store takes the writer's digest instead of reading it again.
struct WrittenGraph : CompiledGraph {
  std::map<std::string, FileIdentity> written_as;
};

// Writes `model` as `folder/file_name`. With ExternalData::always, or when the graph
// would not fit one protobuf message, tensors of 1 KiB or more go to
// `folder/file_name.data` (64-byte aligned offsets) and the graph refers to them.
// The model is left as it was passed in. Returns what was written. When `control->stop`
// becomes true, the write ends early by throwing WriteStopped (hashed_file.h) at most a
// buffer's worth later; control->bytes_written counts the bytes written.
//
// An inline graph file is laid out as: the graph field, its initializers first, then the
// graph's other fields, then the model's other fields (protobuf takes fields in any
// order).
WrittenGraph write_graph(onnx::ModelProto& model, const std::filesystem::path& folder,
                         const std::string& file_name, ExternalData mode,
                         WriteControl* control = nullptr);

// One graph of several written together: the model and its file name in the folder.
struct GraphToWrite {
  onnx::ModelProto* model;
  std::string file_name;
};

// Writes the graphs of one compile so that each tensor of 1 KiB or more is stored once
// (npucc-compile(1), --self-contained): all of them go to one external data file,
// `folder/weights.data` (k_shared_weights_file, 64-byte aligned offsets), the first
// graph's in its order, then each later graph's tensors that no earlier graph held, and
// every graph refers to the one copy. Without such tensors, no data file: the graphs are
// written whole. The models are left as they were passed in; `control` as for write_graph.
std::vector<WrittenGraph> write_graphs_sharing_weights(const std::vector<GraphToWrite>& graphs,
                                                       const std::filesystem::path& folder,
                                                       WriteControl* control = nullptr);

// Writes two graphs that hold mostly the same weights (high and low: the low graph keeps
// float32 master weights) so that both files begin with the same bytes: the graph field,
// of the same length in both, and the shared initializers. Those bytes are read and
// hashed once (a SHA-256 state copied at their end) and written to both files. The
// shorter graph is padded to the longer one's length with an unknown field (number
// k_graph_padding_field, zero bytes) that protobuf parsers skip and keep.
class GraphPairWriter {
public:
  // nullptr when the two share too little for this to pay (a low graph that stores
  // converted weights) or either needs external data: write each with write_graph.
  // Until the writer is gone, the two models' initializers are held by it.
  static std::unique_ptr<GraphPairWriter> plan(onnx::ModelProto& first, onnx::ModelProto& second,
                                               const std::filesystem::path& folder,
                                               const std::string& first_name,
                                               const std::string& second_name, ExternalData mode);
  ~GraphPairWriter();
  GraphPairWriter(const GraphPairWriter&) = delete;
  GraphPairWriter& operator=(const GraphPairWriter&) = delete;

  // Once. `control` as for write_graph.
  std::pair<WrittenGraph, WrittenGraph> write(WriteControl* control = nullptr);

  struct Plan;

private:
  explicit GraphPairWriter(std::unique_ptr<Plan> plan);
  std::unique_ptr<Plan> m_plan;
};

// About how many bytes write_graph writes for `model` (its files' sizes): the progress of a
// long write is shown against it.
uint64_t graph_file_bytes(onnx::ModelProto& model);

// The field number of the padding in a paired graph (GraphProto uses 1..16).
constexpr uint32_t k_graph_padding_field = 8191;

// Padding fields that take exactly `bytes` bytes: 0, or 4 or more. A length's varint
// grows at 128, so one field cannot take every size: an empty field first makes up the
// difference.
std::string graph_padding(uint64_t bytes);

} // namespace npucc::output
