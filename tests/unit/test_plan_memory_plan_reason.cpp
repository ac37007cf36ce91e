#include "check/validate.h"
#include "npucc/memory_plan.h"
#include "test_support.h"

#include <doctest/doctest.h>

namespace {

npucc::MemoryPlan plan_of(const std::string& text) {
  auto model = npucc::test::parse_text_model(text);
  npucc::check::infer_shapes_strict(model);
  return npucc::plan_memory(model.graph());
}

} // namespace

TEST_SUITE("npucc::plan_memory reason") {
  TEST_CASE("a symbolic dim of an input: fix it with --input-shape") {
    auto plan = plan_of(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[N,3] x) => (float[N,3] y) {
        r = Relu(x)
        y = Neg(r)
      }
    )");
    CHECK_FALSE(plan.available);
    CHECK(plan.reason == "tensor \"r\" has a dynamic dimension \"N\"; it comes from input \"x\"; "
                         "fix it with --input-shape");
  }

  TEST_CASE("all inputs static: inference's limit, not the user's") {
    auto plan = plan_of(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[2,3] x, int64[2] s) => (float[?,?] y) {
        r = Reshape(x, s)
        y = Neg(r)
      }
    )");
    CHECK_FALSE(plan.available);
    CHECK(plan.reason.find("tensor \"r\" has ") == 0);
    CHECK(plan.reason.find("shape inference could not resolve it although every input is "
                           "static") != std::string::npos);
    CHECK(plan.reason.find("--input-shape") == std::string::npos);
  }

  TEST_CASE("an unresolved dim while some input is still dynamic") {
    auto plan = plan_of(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[2,3] x, int64[K] s) => (float[?,?] y) {
        r = Reshape(x, s)
        y = Neg(r)
      }
    )");
    CHECK_FALSE(plan.available);
    CHECK(plan.reason.find("input \"s\" is still dynamic; fix dynamic dims with --input-shape") !=
          std::string::npos);
  }

  TEST_CASE("static shapes everywhere: a plan") {
    auto plan = plan_of(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[2,3] x) => (float[2,3] y) {
        r = Relu(x)
        y = Neg(r)
      }
    )");
    CHECK(plan.available);
    CHECK(plan.reason.empty());
  }

  TEST_CASE("a sequence or an optional (opsets 18-26) has no static size, and no hint") {
    auto plan = plan_of(R"(
      <ir_version: 10, opset_import: ["" : 24]>
      agraph (float[2,6] x) => (float[2,6] y) {
        parts = SplitToSequence <axis = 1> (x)
        y = ConcatFromSequence <axis = 1> (parts)
      }
    )");
    CHECK_FALSE(plan.available);
    CHECK(plan.reason == "tensor \"parts\" is a sequence, whose size is known only at run time");
    plan = plan_of(R"(
      <ir_version: 9, opset_import: ["" : 18]>
      agraph (float[2] x) => (float[2] y) {
        maybe = Optional(x)
        y = OptionalGetElement(maybe)
      }
    )");
    CHECK_FALSE(plan.available);
    CHECK(plan.reason == "tensor \"maybe\" is an optional, whose size is known only at run time");
  }
}

