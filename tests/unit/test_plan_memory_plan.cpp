#include "npucc/memory_plan.h"

#include <doctest/doctest.h>
#include <random>

namespace {

void add_value(onnx::GraphProto& graph, const std::string& name, int64_t elements) {
  auto* value = graph.add_value_info();
  value->set_name(name);
  auto* tensor = value->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  tensor->mutable_shape()->add_dim()->set_dim_value(elements);
}

// A random DAG: node i reads one or two earlier values, so lifetimes vary and
// overlap; sizes vary so best fit has choices to make.
onnx::GraphProto random_graph(int nodes, unsigned seed) {
  std::mt19937 random(seed);
  onnx::GraphProto graph;
  auto* input = graph.add_input();
  input->set_name("v0");
  for (int i = 1; i <= nodes; ++i) {
    auto* node = graph.add_node();
    node->set_op_type("Add");
    std::uniform_int_distribution<int> pick(std::max(0, i - 50), i - 1);
    node->add_input("v" + std::to_string(pick(random)));
    node->add_input("v" + std::to_string(pick(random)));
    node->add_output("v" + std::to_string(i));
    add_value(graph, "v" + std::to_string(i), 1 + static_cast<int64_t>(random() % 5000));
  }
  *graph.add_output() = graph.value_info(nodes - 1);
  return graph;
}

// No two tensors alive at the same step may share a byte of the arena.
void check_valid(const npucc::MemoryPlan& plan) {
  REQUIRE(plan.available);
  auto slot = [&](const npucc::PlannedTensor& t) {
    return (std::max<uint64_t>(t.bytes, 1) + plan.alignment - 1) / plan.alignment * plan.alignment;
  };
  // Sweep by birth: compare each tensor with those still alive.
  std::vector<const npucc::PlannedTensor*> sorted;
  for (const auto& tensor : plan.tensors) {
    sorted.push_back(&tensor);
  }
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->first < b->first; });
  std::vector<const npucc::PlannedTensor*> alive;
  int64_t conflicts = 0;
  int64_t outside = 0;
  for (const auto* tensor : sorted) {
    alive.erase(std::remove_if(alive.begin(), alive.end(),
                               [&](auto* other) { return other->last < tensor->first; }),
                alive.end());
    for (const auto* other : alive) {
      bool apart = tensor->offset + slot(*tensor) <= other->offset ||
                   other->offset + slot(*other) <= tensor->offset;
      conflicts += apart ? 0 : 1;
    }
    outside += tensor->offset + slot(*tensor) <= plan.arena_bytes ? 0 : 1;
    alive.push_back(tensor);
  }
  CHECK(conflicts == 0);
  CHECK(outside == 0);
  CHECK(plan.arena_bytes >= plan.lower_bound_bytes);
  CHECK(plan.arena_bytes <= plan.unshared_bytes);
}

} // namespace

TEST_SUITE("npucc::plan_memory") {
  TEST_CASE("placements never overlap for tensors alive together") {
    SUBCASE("largest first (small graphs)") {
      check_valid(npucc::plan_memory(random_graph(2000, 1)));
    }
    SUBCASE("execution order (large graphs)") {
      auto plan = npucc::plan_memory(random_graph(20000, 2));
      check_valid(plan);
      // Reuse must actually happen: a 50-wide window of ~10 KB tensors needs far
      // less than every tensor in its own buffer.
      CHECK(plan.arena_bytes * 20 < plan.unshared_bytes);
    }
  }

  // Not timed here (timings belong to tests/bench/run); a quadratic planner would run into
  // ctest's timeout on this chain.
  TEST_CASE("a chain of a million tensors plans, reusing two buffers") {
    onnx::GraphProto graph;
    graph.add_input()->set_name("t0");
    const int count = 1000000;
    for (int i = 1; i <= count; ++i) {
      auto* node = graph.add_node();
      node->set_op_type("Relu");
      node->add_input("t" + std::to_string(i - 1));
      node->add_output("t" + std::to_string(i));
      add_value(graph, "t" + std::to_string(i), 16);
    }
    *graph.add_output() = graph.value_info(count - 1);
    auto plan = npucc::plan_memory(graph);
    REQUIRE(plan.available);
    CHECK(plan.tensors.size() == count);
    CHECK(plan.arena_bytes == 2 * plan.alignment); // producer and consumer alternate
  }

  TEST_CASE("absurd static sizes leave the plan unavailable with a reason") {
    onnx::GraphProto graph;
    graph.add_input()->set_name("x");
    auto* node = graph.add_node();
    node->set_op_type("Relu");
    node->add_input("x");
    node->add_output("y");
    auto* value = graph.add_output();
    value->set_name("y");
    auto* tensor = value->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx::TensorProto::FLOAT);
    for (int i = 0; i < 3; ++i) {
      tensor->mutable_shape()->add_dim()->set_dim_value(int64_t{1} << 30);
    }
    auto plan = npucc::plan_memory(graph);
    CHECK_FALSE(plan.available);
    CHECK(plan.reason.find("\"y\"") != std::string::npos);
  }
}
