#pragma once

#include <onnx/onnx_pb.h>
#include <string>
#include <vector>

// The fields IR versions 9 to 13 added, which ONNX 1.12's generated classes do not have:
// protobuf keeps them as unknown fields, and copies, moves, Swap and serialisation keep
// those, so they reach the output unless a message is rebuilt or cleared. This reads the
// few that npucc must act on, by field number (onnx.proto of ONNX 1.23).
namespace npucc::model {

namespace ir_field {
inline constexpr int k_node_overload = 8;
inline constexpr int k_node_metadata_props = 9;
inline constexpr int k_node_device_configurations = 10;
inline constexpr int k_function_attribute_proto = 11;
inline constexpr int k_function_value_info = 12;
inline constexpr int k_function_overload = 13;
inline constexpr int k_function_metadata_props = 14;
inline constexpr int k_graph_metadata_props = 16;
inline constexpr int k_value_info_metadata_props = 4;
inline constexpr int k_tensor_metadata_props = 16;
inline constexpr int k_model_configuration = 26;
} // namespace ir_field

// The overload a node calls, or a function is (IR 10); "" when none.
std::string overload_of(const onnx::NodeProto& node);
std::string overload_of(const onnx::FunctionProto& function);

// A function's attribute_proto (IR 9): its attributes with their default values.
// Throws npucc::Error naming the function when one does not parse.
std::vector<onnx::AttributeProto> attribute_defaults(const onnx::FunctionProto& function);

// Gives each value_info entry of `to` (and of its subgraphs, matched in walk order) the
// unknown fields (metadata_props) of the same-named entry in `from`, when it has none:
// for graphs whose value_info was cleared and inferred again.
void carry_value_info_fields(const onnx::GraphProto& from, onnx::GraphProto& to);

// A node's device configurations (IR 11) name the tensors they shard, which must be the
// node's inputs or outputs. After a rewrite put Casts between a node and a value (the
// precision rewrite casts inputs; the emulation renames outputs), a sharding spec's
// tensor is renamed to the node's own input or output that reaches it through Casts
// only, which holds the same elements in the same layout. A spec whose tensor the node
// no longer reads or writes at all (a pass replaced it) is dropped: a dangling one is
// invalid. Returns the number dropped, over `graph` and its subgraphs.
int64_t fix_device_configurations(onnx::GraphProto& graph);

} // namespace npucc::model
