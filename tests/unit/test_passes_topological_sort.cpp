#include "npucc/error.h"
#include "passes/pass_manager.h"
#include "passes/topological_sort.h"
#include "test_support.h"

#include <doctest/doctest.h>

using npucc::passes::PassManager;
using npucc::passes::TopologicalSort;

TEST_SUITE("npucc::passes::TopologicalSort") {
  TEST_CASE("orders an unsorted graph and keeps a sorted one") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[2] x) => (float[2] z) {
        z = Relu(y)
        y = Neg(x)
      }
    )");
    TopologicalSort sort;
    CHECK(PassManager::run_pass(sort, model) == 2);
    CHECK(model.graph().node(0).op_type() == "Neg");
    CHECK(PassManager::run_pass(sort, model) == 0);
  }

  TEST_CASE("reports a cycle and a missing producer") {
    auto cycle = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[2] x) => (float[2] z) {
        a = Add(x, b)
        b = Neg(a)
        z = Relu(b)
      }
    )");
    TopologicalSort sort;
    CHECK_THROWS_WITH_AS(PassManager::run_pass(sort, cycle), doctest::Contains("cycle"),
                         npucc::Error);
    auto missing = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[2] x) => (float[2] z) {
        z = Add(x, ghost)
      }
    )");
    CHECK_THROWS_WITH_AS(PassManager::run_pass(sort, missing), doctest::Contains("\"ghost\""),
                         npucc::Error);
  }

  TEST_CASE("counts values read by If bodies as dependencies") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (bool c, float[2] x) => (float[2] z) {
        z = If(c) <then_branch = g1 () => (float[2] t) { t = Neg(y) },
                   else_branch = g2 () => (float[2] e) { e = Relu(y) }>
        y = Abs(x)
      }
    )");
    TopologicalSort sort;
    CHECK(PassManager::run_pass(sort, model) == 2);
    CHECK(model.graph().node(0).op_type() == "Abs");
  }
}
