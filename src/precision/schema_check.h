#pragma once

#include <cstdint>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <vector>

namespace npucc::precision {

// The node's schema at the model's opset for its domain; nullptr when unknown.
const onnx::OpSchema* find_schema(const onnx::NodeProto& node, const onnx::ModelProto& model);

// Inputs that stay float32 whatever the node runs in: Resize/Upsample roi and scales (ORT's
// float16 tool, ALWAYS_FLOAT_INPUTS), normalisation statistics (BatchNormalization scale, B,
// mean, var; InstanceNormalization scale, B), GridSample's grid (sampling coordinates).
// Whether the node can then run in the low type is the schema's call (BatchNormalization-15
// types them separately; older ones tie them to the input, so such a node stays float32).
bool is_pinned_input(const onnx::OpSchema& schema, const std::string& op_type, int index);
bool is_pinned_output(const onnx::OpSchema& schema, const std::string& op_type, int index);

// Inputs that carry shapes, sizes or indices (Reshape shape, Slice starts, Gather indices,
// Range bounds, ...): float arithmetic feeding them is kept float32 (float16 holds integers
// exactly only up to 2048).
bool is_index_input(const onnx::OpSchema& schema, const std::string& op_type, int index);

// Would the schema accept these element types (0 = leave that slot out of the check)?
// Checks every slot's allowed types and that slots sharing a type parameter agree.
bool schema_accepts(const onnx::OpSchema& schema, const std::vector<int32_t>& input_types,
                    const std::vector<int32_t>& output_types);

// Does input `index` accept `elem_type` by itself (its type parameter bound to no other
// slot that disagrees is NOT checked: use for ops like Cast whose input is free)?
bool input_accepts(const onnx::OpSchema& schema, int index, int32_t elem_type);

} // namespace npucc::precision
