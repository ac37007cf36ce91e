#pragma once

#include "npucc/inspect.h"

#include <onnx/onnx_pb.h>

namespace npucc::inspect {

// Node counts by operator, subgraph count and depth.
void count_nodes(const onnx::GraphProto& graph, InspectReport& report);

// Initializer and Constant-node tensors by element type.
std::vector<ParameterGroup> count_parameters(const onnx::GraphProto& graph);

// Nodes whose operator has no registered schema at the model's opsets.
std::vector<UnregisteredOp> find_unregistered_ops(const onnx::ModelProto& model);

// "ai.onnx" for the default domain (written "" or "ai.onnx"), else the domain.
std::string domain_name(const std::string& domain);

} // namespace npucc::inspect
