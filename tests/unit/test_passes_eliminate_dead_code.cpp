#include "passes/eliminate_dead_code.h"
#include "test_passes_support.h"

using npucc::passes::EliminateDeadCode;
using npucc::test::check_valid;
using npucc::test::count_ops;
using npucc::test::has_initializer;
using npucc::test::has_value_info;
using npucc::test::run;

TEST_SUITE("npucc::passes::EliminateDeadCode") {
  TEST_CASE("removes chains of unread nodes in one run and keeps what outputs need") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[2] x) => (float[2] y) {
        a = Neg(x)
        b = Abs(a)
        c = Relu(b)
        y = Sigmoid(x)
        d = Exp(y)
      }
    )");
    // Stale value_info for a removed value must go with it.
    auto* info = model.mutable_graph()->add_value_info();
    *info = model.graph().input(0);
    info->set_name("b");
    EliminateDeadCode pass;
    CHECK(run(pass, model) == 4);
    REQUIRE(model.graph().node_size() == 1);
    CHECK(model.graph().node(0).op_type() == "Sigmoid");
    CHECK_FALSE(has_value_info(model.graph(), "b"));
    check_valid(model);
    CHECK(run(pass, model) == 0);
  }

  TEST_CASE("keeps a node whose unused output sits beside a used one") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[4] x) => (float[2] y) {
        y, z = Split <axis = 0> (x)
        w = Neg(z)
      }
    )");
    EliminateDeadCode pass;
    CHECK(run(pass, model) == 1);
    CHECK(count_ops(model.graph(), "Split") == 1);
    CHECK(count_ops(model.graph(), "Neg") == 0);
    check_valid(model);
  }

  TEST_CASE("drops unread initializers but not those that are graph inputs") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[2] x, float[2] bias) => (float[2] y)
        <float[2] w = {1, 2}, float[2] unused = {3, 4}, float[2] bias = {0, 0},
         float[2] only_dead = {5, 6}> {
        y = Add(x, w)
        d = Mul(x, only_dead)
      }
    )");
    EliminateDeadCode pass;
    // The Mul node, then `unused` and `only_dead`; `bias` is an overridable input.
    CHECK(run(pass, model) == 3);
    CHECK(has_initializer(model.graph(), "w"));
    CHECK(has_initializer(model.graph(), "bias"));
    CHECK_FALSE(has_initializer(model.graph(), "unused"));
    CHECK_FALSE(has_initializer(model.graph(), "only_dead"));
    check_valid(model);
    CHECK(run(pass, model) == 0);
  }

  TEST_CASE("values read only inside an If body stay alive; dead body nodes go") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (bool cond, float[2] x) => (float[2] y) <float[2] k = {1, 2}> {
        a = Neg(x)
        unread = Abs(x)
        y = If(cond) <
          then_branch = g1 () => (float[2] t) {
            t = Mul(a, k)
            junk = Exp(a)
          },
          else_branch = g2 () => (float[2] e) {
            e = Relu(a)
          }>
      }
    )");
    EliminateDeadCode pass;
    // `unread` in the main graph, `junk` in the then branch.
    CHECK(run(pass, model) == 2);
    CHECK(count_ops(model.graph(), "Neg") == 1);
    CHECK(count_ops(model.graph(), "Abs") == 0);
    CHECK(has_initializer(model.graph(), "k"));
    REQUIRE(model.graph().node_size() == 2);
    CHECK(model.graph().node(1).attribute(0).g().node_size() == 1);
    check_valid(model);
    CHECK(run(pass, model) == 0);
  }

  TEST_CASE("an unread If goes with the values only its bodies read") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (bool cond, float[2] x) => (float[2] y) {
        y = Neg(x)
        a = Abs(x)
        z = If(cond) <
          then_branch = g1 () => (float[2] t) { t = Relu(a) },
          else_branch = g2 () => (float[2] e) { e = Exp(a) }>
      }
    )");
    EliminateDeadCode pass;
    CHECK(run(pass, model) == 2);
    REQUIRE(model.graph().node_size() == 1);
    CHECK(model.graph().node(0).op_type() == "Neg");
    check_valid(model);
  }

  TEST_CASE("keeps nodes of ops without a schema, and what they read") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17, "com.example" : 1]>
      agraph (float[2] x) => (float[2] y) {
        a = Neg(x)
        log = com.example.Print(a)
        y = Relu(x)
        b = Abs(x)
        z = If(c) <
          then_branch = g1 () => (float[2] t) { t = com.example.Print(b) },
          else_branch = g2 () => (float[2] e) { e = Exp(b) }>
        c = Constant <value = bool {1}> ()
      }
    )");
    EliminateDeadCode pass;
    CHECK(run(pass, model) == 0);
    CHECK(model.graph().node_size() == 6);
  }

  TEST_CASE("keeps graph inputs and outputs read by nothing") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[2] x, float[2] unused_input) => (float[2] x2) {
        x2 = Identity(x)
      }
    )");
    EliminateDeadCode pass;
    CHECK(run(pass, model) == 0);
    CHECK(model.graph().input_size() == 2);
    check_valid(model);
  }

  TEST_CASE("cleans Loop bodies and keeps every body output") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (int64 n, bool cond, float[2] x) => (float[2] out, float[N,2] scanned) {
        offset = Neg(x)
        out, scanned = Loop(n, cond, x) <body = g (int64 i, bool c, float[2] v) => (bool c2, float[2] v2, float[2] each) {
          c2 = Identity(c)
          v2 = Add(v, offset)
          each = Abs(v)
          wasted = Exp(v2)
        }>
      }
    )");
    EliminateDeadCode pass;
    CHECK(run(pass, model) == 1);
    REQUIRE(model.graph().node_size() == 2);
    const auto& loop_body = model.graph().node(1).attribute(0).g();
    CHECK(loop_body.node_size() == 3);
    CHECK(count_ops(loop_body, "Exp") == 0);
    check_valid(model);
    CHECK(run(pass, model) == 0);
  }
}
