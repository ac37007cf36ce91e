#pragma once

#include <functional>
#include <onnx/onnx_pb.h>
#include <string>
#include <unordered_set>
#include <vector>

namespace npucc::model {

// The graphs held by a node's attributes (If branches, Loop and Scan bodies).
std::vector<onnx::GraphProto*> subgraphs_of(onnx::NodeProto& node);
std::vector<const onnx::GraphProto*> subgraphs_of(const onnx::NodeProto& node);

// Visits `graph` and every graph nested in it, outer before inner. `depth` is 0 for
// the graph passed in.
void for_each_graph(onnx::GraphProto& graph,
                    const std::function<void(onnx::GraphProto&, int depth)>& visit);
void for_each_graph(const onnx::GraphProto& graph,
                    const std::function<void(const onnx::GraphProto&, int depth)>& visit);

// Every tensor stored in a graph and its subgraphs: initializers, Constant values,
// tensor attributes, and (unless skipped) sparse tensor values and indices.
enum class SparseTensors { visit, skip };
void for_each_tensor(onnx::GraphProto& graph, const std::function<void(onnx::TensorProto&)>& visit,
                     SparseTensors sparse = SparseTensors::visit);

// Names a node reads from enclosing scopes through its subgraphs ("implicit inputs"):
// names used inside a subgraph that the subgraph does not define itself.
std::unordered_set<std::string> implicit_inputs(const onnx::NodeProto& node);

// Names a graph reads from enclosing scopes.
std::unordered_set<std::string> implicit_inputs_of_graph(const onnx::GraphProto& graph);

// Names a graph defines: its inputs, initializers and node outputs.
std::unordered_set<std::string> defined_names(const onnx::GraphProto& graph);

// A readable name for a node in messages: 'Conv node "conv1"' or 'Conv node #12'.
std::string describe_node(const onnx::NodeProto& node, int index);

} // namespace npucc::model
