#pragma once

#include <initializer_list>
#include <onnx/onnx_pb.h>

namespace npucc::passes {

// The newest opset whose operator definitions the passes were checked against (ONNX's
// Changelog up to opset 26). A pass that relies on what an op computes acts only on the
// versions it lists; at a newer opset of the default domain it acts on nothing, since a
// version npucc has not read may mean something else.
constexpr int k_checked_through_opset = 26;

// The version of `node`'s op in force in `model`: the since-version of its schema at the
// model's opset of the node's domain; 0 when the domain is not imported, the op has no
// schema there, or the default domain's opset is newer than k_checked_through_opset.
int op_version(const onnx::NodeProto& node, const onnx::ModelProto* model);

// Whether `node`'s version in force (op_version) is one of `checked`, the versions whose
// definitions the caller implements.
bool version_is_one_of(const onnx::NodeProto& node, const onnx::ModelProto* model,
                       std::initializer_list<int> checked);

} // namespace npucc::passes
