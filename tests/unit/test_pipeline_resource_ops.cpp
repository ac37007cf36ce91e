#include "pipeline/resource_ops.h"
#include "test_support.h"

#include <doctest/doctest.h>

using npucc::pipeline::find_uncacheable_op;

TEST_SUITE("npucc::pipeline::ResourceOps") {
  TEST_CASE("an ordinary model is cacheable") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2] x) => (float[2] y) { y = Relu(x) }
    )");
    CHECK_FALSE(find_uncacheable_op(model).has_value());
  }

  TEST_CASE("a training-state op names the op and the node") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17, "ai.onnx.preview.training" : 1]>
      g (float r, int64 t, float[2] x, float[2] gr, float[2] h) => (float[2] x2, float[2] h2) {
        x2, h2 = ai.onnx.preview.training.Adagrad <decay_factor = 0.1> (r, t, x, gr, h)
      }
    )");
    model.mutable_graph()->mutable_node(0)->set_name("opt");
    auto found = find_uncacheable_op(model);
    REQUIRE(found.has_value());
    CHECK(found->reason == "training-op");
    CHECK(found->message.find("Adagrad") != std::string::npos);
    CHECK(found->message.find("\"opt\"") != std::string::npos);
  }

  TEST_CASE("a custom domain without schemas is uncacheable, also inside a subgraph") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17, "com.acme" : 1]>
      g (bool c, float[2] x) => (float[2] y) {
        y = If (c) <
          then_branch = t () => (float[2] a) { a = com.acme.MagicOp(x) },
          else_branch = e () => (float[2] b) { b = Relu(x) }
        >
      }
    )");
    auto found = find_uncacheable_op(model);
    REQUIRE(found.has_value());
    CHECK(found->reason == "custom-op");
    CHECK(found->message.find("com.acme::MagicOp") != std::string::npos);
    CHECK(found->message.find("subgraph") != std::string::npos);
  }

  TEST_CASE("a model-local function is not a custom op") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17, "local" : 1]>
      g (float[2] x) => (float[2] y) { y = local.Twice(x) }
      <domain: "local", opset_import: ["" : 17]>
      Twice (a) => (b) { b = Add(a, a) }
    )");
    CHECK_FALSE(find_uncacheable_op(model).has_value());
  }
}
