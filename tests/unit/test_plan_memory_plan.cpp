#include "npucc/memory_plan.h"

#include <doctest/doctest.h>
#include <random>

namespace {

void add_value(onnx::GraphProto& graph, const std::string& name, int64_t elements,
               int32_t elem_type = onnx::TensorProto::FLOAT) {
  auto* value = graph.add_value_info();
  value->set_name(name);
  auto* tensor = value->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  tensor->mutable_shape()->add_dim()->set_dim_value(elements);
}

onnx::NodeProto& add_node(onnx::GraphProto& graph, const std::string& op,
                          const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs) {
  auto& node = *graph.add_node();
  node.set_op_type(op);
  for (const auto& name : inputs) {
    node.add_input(name);
  }
  for (const auto& name : outputs) {
    node.add_output(name);
  }
  return node;
}

const npucc::PlannedTensor* planned(const npucc::MemoryPlan& plan, const std::string& name) {
  for (const auto& tensor : plan.tensors) {
    if (tensor.name == name) {
      return &tensor;
    }
  }
  return nullptr;
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

  TEST_CASE("the element types of IR 9 to 13 take their packed size") {
    // float8 (17-20, float8e8m0 24) a byte each; uint4/int4/float4e2m1 (21-23) two to a byte,
    // uint2/int2 (25, 26) four, the last byte partly used.
    struct Case {
      int32_t type;
      int64_t elements;
      uint64_t bytes;
    };
    const Case cases[] = {{17, 10, 10}, {18, 10, 10}, {19, 10, 10}, {20, 10, 10}, {24, 10, 10},
                          {21, 10, 5},  {22, 11, 6},  {23, 3, 2},   {25, 10, 3},  {26, 4, 1}};
    for (const auto& c : cases) {
      CAPTURE(c.type);
      onnx::GraphProto graph;
      graph.add_input()->set_name("x");
      add_node(graph, "QuantizeLinear", {"x"}, {"q"});
      add_node(graph, "DequantizeLinear", {"q"}, {"y"});
      add_value(graph, "q", c.elements, c.type);
      add_value(graph, "y", c.elements);
      *graph.add_output() = graph.value_info(1);
      auto plan = npucc::plan_memory(graph);
      REQUIRE(plan.available);
      const auto* q = planned(plan, "q");
      REQUIRE(q != nullptr);
      CHECK(q->bytes == c.bytes);
    }
  }

  TEST_CASE("Split with num_outputs and ops with optional outputs") {
    onnx::GraphProto graph;
    graph.add_input()->set_name("x");
    // Split-18 with num_outputs: every output is a tensor of its own.
    add_node(graph, "Split", {"x"}, {"a", "b", "c"});
    // Attention-23 with its optional outputs omitted ("" is no tensor) ...
    add_node(graph, "Attention", {"a", "b", "c"}, {"att", "", "", ""});
    // ... and LayerNormalization with InvStdDev named but read by nobody: it is still
    // written, so it takes memory at its producer's step.
    add_node(graph, "LayerNormalization", {"att", "s"}, {"y", "", "inv"});
    for (const char* name : {"a", "b", "c", "att", "inv"}) {
      add_value(graph, name, 16);
    }
    add_value(graph, "y", 16);
    *graph.add_output() = graph.value_info(5);
    auto plan = npucc::plan_memory(graph);
    check_valid(plan);
    CHECK(plan.tensors.size() == 6);
    const auto* inv = planned(plan, "inv");
    REQUIRE(inv != nullptr);
    CHECK(inv->first == 2);
    CHECK(inv->last == 2);
    CHECK(planned(plan, "a")->last == 1);
    CHECK(planned(plan, "") == nullptr);
  }
}
