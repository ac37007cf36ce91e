#pragma once

#include <onnx/onnx_pb.h>

namespace npucc::schemas {

// Every node of a standard domain (ai.onnx, ai.onnx.ml, the training domains), in the graph
// and its subgraphs, names an operator that exists at the model's opset for that domain;
// throws npucc::Error naming the node, op, domain and opset otherwise, with the opset that
// introduced the op when there is one. Nodes calling the model's own functions, and
// custom domains, are not npucc's to know.
void check_known_operators(const onnx::ModelProto& model);

} // namespace npucc::schemas
