#include "npucc/error.h"
#include "schemas/known_ops.h"

#include <doctest/doctest.h>
#include <onnx/defs/parser.h>

using npucc::schemas::check_known_operators;

namespace {

onnx::ModelProto parse(const char* text) {
  onnx::ModelProto model;
  auto status = onnx::OnnxParser::Parse(model, text);
  REQUIRE_MESSAGE(status.IsOK(), status.ErrorMessage());
  return model;
}

} // namespace

TEST_SUITE("npucc::schemas::KnownOps") {
  TEST_CASE("an op used before the opset that defines it names that opset") {
    auto model = parse(R"(
      <ir_version: 10, opset_import: ["" : 22]>
      g (float[2,3] x) => (float[2,3] y) {
        y = Attention (x, x, x)
      }
    )");
    CHECK_THROWS_WITH_AS(check_known_operators(model),
                         doctest::Contains("no operator Attention in domain ai.onnx at opset 22 "
                                           "(Attention is defined from opset 23)"),
                         npucc::Error);
  }

  TEST_CASE("an op no opset defines is named with its domain, inside subgraphs too") {
    auto model = parse(R"(
      <ir_version: 10, opset_import: ["" : 21]>
      g (bool c, float[2] x) => (float[2] y) {
        y = If (c) <then_branch = t () => (float[2] a) { a = Fancy (x) },
                    else_branch = e () => (float[2] b) { b = Relu (x) }>
      }
    )");
    CHECK_THROWS_WITH_AS(check_known_operators(model),
                         doctest::Contains("no operator Fancy in domain ai.onnx at opset 21 (nor at "
                                           "any opset npucc knows, up to 26)"),
                         npucc::Error);
  }

  TEST_CASE("custom domains and the model's own functions are left alone") {
    auto model = parse(R"(
      <ir_version: 10, opset_import: ["" : 21, "custom" : 1]>
      g (float[2] x) => (float[2] y) {
        t = custom.Anything (x)
        y = Relu (t)
      }
    )");
    CHECK_NOTHROW(check_known_operators(model));
  }
}
