#include "passes/topological_sort.h"

#include "model/graph_walk.h"
#include "npucc/error.h"

#include <queue>
#include <unordered_map>

namespace npucc::passes {

// Kahn's algorithm, always taking the ready node that came first in the file, so an
// already sorted graph keeps its order exactly and a sorted one changes minimally.
int64_t TopologicalSort::run_on_graph(onnx::GraphProto& graph, const GraphContext& context) {
  const int n = graph.node_size();
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < n; ++i) {
    for (const auto& name : graph.node(i).output()) {
      if (name.empty()) {
        continue;
      }
      if (!producer.emplace(name, i).second) {
        throw Error("\"" + name + "\" is produced by both " +
                    model::describe_node(graph.node(producer[name]), producer[name]) + " and " +
                    model::describe_node(graph.node(i), i) + " (a value must have one producer)");
      }
    }
  }
  std::unordered_set<std::string> available = context.outer_names;
  for (const auto& input : graph.input()) {
    available.insert(input.name());
  }
  for (const auto& init : graph.initializer()) {
    available.insert(init.name());
  }
  for (const auto& init : graph.sparse_initializer()) {
    available.insert(init.values().name());
  }

  std::vector<int> pending(n, 0);
  std::vector<std::vector<int>> consumers(n);
  for (int i = 0; i < n; ++i) {
    const auto& node = graph.node(i);
    std::unordered_set<std::string> needs(node.input().begin(), node.input().end());
    for (const auto& name : model::implicit_inputs(node)) {
      needs.insert(name);
    }
    needs.erase("");
    for (const auto& name : needs) {
      auto it = producer.find(name);
      if (it != producer.end()) {
        if (it->second == i) {
          throw Error(model::describe_node(node, i) + " reads its own output \"" + name +
                      "\" (the graph has a cycle)");
        }
        ++pending[i];
        consumers[it->second].push_back(i);
      } else if (available.count(name) == 0) {
        throw Error(model::describe_node(node, i) + " reads \"" + name +
                    "\", which no node, graph input or initializer produces");
      }
    }
  }

  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i) {
    if (pending[i] == 0) {
      ready.push(i);
    }
  }
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int consumer : consumers[i]) {
      if (--pending[consumer] == 0) {
        ready.push(consumer);
      }
    }
  }
  if (static_cast<int>(order.size()) != n) {
    for (int i = 0; i < n; ++i) {
      if (pending[i] > 0) {
        throw Error("the graph has a cycle through " + model::describe_node(graph.node(i), i));
      }
    }
  }

  int64_t moved = 0;
  for (int i = 0; i < n; ++i) {
    moved += order[i] != i ? 1 : 0;
  }
  if (moved == 0) {
    return 0;
  }
  google::protobuf::RepeatedPtrField<onnx::NodeProto> sorted;
  sorted.Reserve(n);
  for (int i : order) {
    sorted.Add(std::move(*graph.mutable_node(i)));
  }
  graph.mutable_node()->Swap(&sorted);
  return moved;
}

} // namespace npucc::passes
