#pragma once

#include "npucc/model.h"

#include <onnx/onnx_pb.h>
#include <string>

namespace npucc::model {

// A shape as messages show it: "[3, 5, N, ?]" (a dim_param by name, an unknown dim as ?).
std::string shape_text(const onnx::TensorShapeProto& shape);

// Checks the shapes a graph declares or shape inference filled in (inputs, outputs and
// value_info of every graph): no negative dims, no tensor over the per-tensor limit
// (a graph input of 2^40 floats is refused before anyone plans or allocates for it),
// and no name listed twice among a graph's inputs or its outputs. Throws npucc::Error
// naming `file` and the value.
void check_value_shapes(const onnx::GraphProto& graph, const std::string& file,
                        const ReadLimits& limits);

} // namespace npucc::model
