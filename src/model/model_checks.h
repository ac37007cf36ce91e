#pragma once

#include "npucc/model.h"

#include <cstdint>
#include <onnx/onnx_pb.h>
#include <string>
#include <unordered_map>

namespace npucc::model {

// Refuses a file too large for one protobuf message, or over the memory limit, before it
// is read.
void check_file_size(uint64_t size, const std::string& file, const ReadLimits& limits);

// Initializers whose raw_data was left out of the parsed bytes (embedded_weights.h), with
// the length of what the file holds for each: checked against their dims in its place.
using LeftOutBytes = std::unordered_map<const onnx::TensorProto*, uint64_t>;

// A parsed model's structure: a graph, IR and opset versions, subgraph nesting, every
// tensor's size against its type and dims, sparse tensors, declared value shapes. Throws
// npucc::Error with one line naming `file`.
void check_structure(onnx::ModelProto& proto, const std::string& file, const ReadLimits& limits,
                     const LeftOutBytes& left_out = {});

} // namespace npucc::model
