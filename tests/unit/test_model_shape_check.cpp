#include "model/shape_check.h"
#include "npucc/error.h"
#include "npucc/memory_plan.h"
#include "test_support.h"

#include <doctest/doctest.h>

namespace {

onnx::GraphProto graph_with_input_dims(const std::vector<int64_t>& dims) {
  auto model = npucc::test::parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N] x) => (float[N] y) {
      y = Relu(x)
    }
  )");
  auto* shape = model.mutable_graph()
                    ->mutable_input(0)
                    ->mutable_type()
                    ->mutable_tensor_type()
                    ->mutable_shape();
  shape->clear_dim();
  for (int64_t dim : dims) {
    shape->add_dim()->set_dim_value(dim);
  }
  return model.graph();
}

} // namespace

TEST_SUITE("npucc::model::check_value_shapes") {
  TEST_CASE("accepts dynamic and ordinary shapes") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[N, 3] x, int64[] n) => (float[N, 3] y) {
        y = Relu(x)
      }
    )");
    CHECK_NOTHROW(npucc::model::check_value_shapes(model.graph(), "m.onnx", {}));
    CHECK_NOTHROW(
        npucc::model::check_value_shapes(graph_with_input_dims({1024, 1024}), "m.onnx", {}));
  }

  TEST_CASE("refuses negative dims, tensors over the limit and overflowing sizes") {
    CHECK_THROWS_WITH_AS(
        npucc::model::check_value_shapes(graph_with_input_dims({-5, 3}), "m.onnx", {}),
        doctest::Contains("m.onnx: input \"x\" has a negative dimension -5"), npucc::Error);
    CHECK_THROWS_WITH_AS(
        npucc::model::check_value_shapes(graph_with_input_dims({int64_t{1} << 40}), "m.onnx", {}),
        doctest::Contains("4.0 TiB"), npucc::Error);
    CHECK_THROWS_WITH_AS(
        npucc::model::check_value_shapes(
            graph_with_input_dims({int64_t{1} << 40, int64_t{1} << 40}), "m.onnx", {}),
        doctest::Contains("overflows"), npucc::Error);
    npucc::ReadLimits small;
    small.max_tensor_bytes = 1000;
    CHECK_THROWS_AS(npucc::model::check_value_shapes(graph_with_input_dims({251}), "m.onnx", small),
                    npucc::Error);
    CHECK_NOTHROW(npucc::model::check_value_shapes(graph_with_input_dims({250}), "m.onnx", small));
  }

  TEST_CASE("refuses a name listed twice, in subgraphs too") {
    auto graph = graph_with_input_dims({2});
    *graph.add_output() = graph.output(0);
    CHECK_THROWS_WITH_AS(npucc::model::check_value_shapes(graph, "m.onnx", {}),
                         doctest::Contains("output \"y\" is listed twice"), npucc::Error);
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (bool c, float[2] x) => (float[2] y) {
        y = If(c) <
          then_branch = t () => (float[2] a) { a = Relu(x) },
          else_branch = e () => (float[2] b) { b = Neg(x) }
        >
      }
    )");
    auto* then_branch = model.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g();
    *then_branch->add_output() = then_branch->output(0);
    CHECK_THROWS_WITH_AS(npucc::model::check_value_shapes(model.graph(), "m.onnx", {}),
                         doctest::Contains("subgraph"), npucc::Error);
  }
}

TEST_SUITE("npucc::plan_memory") {
  TEST_CASE("a tensor too large to plan makes the plan unavailable, without overflow") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[N] x) => (float[N] y) {
        y = Relu(x)
      }
    )");
    auto* dim = model.mutable_graph()
                    ->mutable_output(0)
                    ->mutable_type()
                    ->mutable_tensor_type()
                    ->mutable_shape()
                    ->mutable_dim(0);
    dim->set_dim_value(int64_t{1} << 60);
    auto plan = npucc::plan_memory(model.graph());
    CHECK_FALSE(plan.available);
    CHECK(plan.reason.find("too large") != std::string::npos);
    dim->set_dim_value(int64_t{1} << 40);
    plan = npucc::plan_memory(model.graph());
    REQUIRE(plan.available);
    CHECK(plan.arena_bytes == uint64_t{4} << 40);
  }
}
