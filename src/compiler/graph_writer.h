#pragma once

#include "npucc/compile.h"

#include <filesystem>

#include <onnx/onnx_pb.h>

namespace npucc::compiler {

// Writes `model` as `folder/file_name`. With ExternalData::always, or when the graph
// would not fit one protobuf message, tensors of 1 KiB or more go to
// `folder/file_name.data` (64-byte aligned offsets) and the graph refers to them.
// The model is left as it was passed in. Returns what was written.
CompiledGraph write_graph(onnx::ModelProto& model, const std::filesystem::path& folder,
                          const std::string& file_name, ExternalData mode);

} // namespace npucc::compiler
