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

// A graph held by a node's attribute, and that node.
template <typename Graph> struct Body {
  Graph* graph;
  const onnx::NodeProto* owner;
};

// The bodies held by a graph's nodes, in node order.
std::vector<Body<onnx::GraphProto>> bodies_of(onnx::GraphProto& graph);
std::vector<Body<const onnx::GraphProto>> bodies_of(const onnx::GraphProto& graph);

// The one recursion into If/Loop/Scan bodies: walks `graph` and every graph nested in
// it, depth first, outer before inner, carrying a State down the nesting.
//   visit(graph, state)        runs on each graph first; it may rewrite the graph (its
//                              bodies are looked up afterwards) and change the state
//   open(graph, state)         runs only on a graph with bodies: makes the state they
//                              all start from (so graphs without bodies never pay for it)
//   enter(owner, body, state)  adjusts one body's own copy for the node holding it
// Graph is onnx::GraphProto or const onnx::GraphProto.
template <typename Graph, typename State, typename Visit, typename Open, typename Enter>
void walk_graphs(Graph& graph, State state, const Visit& visit, const Open& open,
                 const Enter& enter) {
  visit(graph, state);
  auto bodies = bodies_of(graph);
  if (bodies.empty()) {
    return;
  }
  open(graph, state);
  for (size_t i = 0; i < bodies.size(); ++i) {
    // The last body takes the state itself: one copy fewer of what may be large.
    State body_state = i + 1 == bodies.size() ? std::move(state) : state;
    enter(*bodies[i].owner, *bodies[i].graph, body_state);
    walk_graphs(*bodies[i].graph, std::move(body_state), visit, open, enter);
  }
}

// Visits `graph` and every graph nested in it, outer before inner. `depth` is 0 for
// the graph passed in.
void for_each_graph(onnx::GraphProto& graph,
                    const std::function<void(onnx::GraphProto&, int depth)>& visit);
void for_each_graph(const onnx::GraphProto& graph,
                    const std::function<void(const onnx::GraphProto&, int depth)>& visit);

// Every node input named `from`, in `graph` and the bodies nested in it, reads `to` instead
// (graph outputs and definitions are left alone): how a value gets a step put before it.
void rename_reads(onnx::GraphProto& graph, const std::string& from, const std::string& to);

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
