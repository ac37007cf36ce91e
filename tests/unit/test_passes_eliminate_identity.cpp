#include "passes/eliminate_identity.h"
#include "test_passes_support.h"

using npucc::passes::EliminateIdentity;
using npucc::test::check_valid;
using npucc::test::count_ops;
using npucc::test::has_value_info;
using npucc::test::inputs_of;
using npucc::test::run;
using Names = std::vector<std::string>;

namespace {

const onnx::GraphProto& body(const onnx::NodeProto& node, int attribute) {
  return node.attribute(attribute).g();
}

} // namespace

TEST_SUITE("npucc::passes::EliminateIdentity") {
  TEST_CASE("readers of the output read the input instead") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[2] x) => (float[2] z) {
        y = Identity(x)
        w = Identity(y)
        z = Add(w, y)
      }
    )");
    auto* info = model.mutable_graph()->add_value_info();
    *info = model.graph().input(0);
    info->set_name("y");
    EliminateIdentity pass;
    CHECK(run(pass, model) == 2);
    REQUIRE(model.graph().node_size() == 1);
    CHECK(inputs_of(model.graph().node(0)) == Names{"x", "x"});
    CHECK_FALSE(has_value_info(model.graph(), "y"));
    check_valid(model);
    CHECK(run(pass, model) == 0);
  }

  TEST_CASE("an Identity that is a graph output renames its producer's output") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[2] x) => (float[2] y, float[2] z) {
        a = Neg(x)
        y = Identity(a)
        z = Abs(a)
      }
    )");
    auto* info = model.mutable_graph()->add_value_info();
    *info = model.graph().input(0);
    info->set_name("a");
    EliminateIdentity pass;
    CHECK(run(pass, model) == 1);
    const auto& graph = model.graph();
    REQUIRE(graph.node_size() == 2);
    CHECK(graph.node(0).output(0) == "y");
    CHECK(inputs_of(graph.node(1)) == Names{"y"});
    CHECK(graph.output(0).name() == "y");
    CHECK(graph.output(1).name() == "z");
    CHECK_FALSE(has_value_info(graph, "a"));
    check_valid(model);
    CHECK(run(pass, model) == 0);
  }

  TEST_CASE("keeps an Identity when neither rewrite would keep the interface") {
    SUBCASE("input and output are both graph interface names") {
      auto model = npucc::test::parse_text_model(R"(
        <ir_version: 8, opset_import: ["" : 17]>
        agraph (float[2] x) => (float[2] y) {
          y = Identity(x)
        }
      )");
      EliminateIdentity pass;
      CHECK(run(pass, model) == 0);
      CHECK(count_ops(model.graph(), "Identity") == 1);
    }
    SUBCASE("the input is a graph output too") {
      auto model = npucc::test::parse_text_model(R"(
        <ir_version: 8, opset_import: ["" : 17]>
        agraph (float[2] x) => (float[2] a, float[2] y) {
          a = Neg(x)
          y = Identity(a)
        }
      )");
      EliminateIdentity pass;
      CHECK(run(pass, model) == 0);
      CHECK(count_ops(model.graph(), "Identity") == 1);
    }
    SUBCASE("the input is an initializer") {
      auto model = npucc::test::parse_text_model(R"(
        <ir_version: 8, opset_import: ["" : 17]>
        agraph (float[2] x) => (float[2] y) <float[2] w = {1, 2}> {
          y = Identity(w)
        }
      )");
      EliminateIdentity pass;
      CHECK(run(pass, model) == 0);
      check_valid(model);
    }
  }

  TEST_CASE("renames reads inside If bodies of the outer graph's values") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (bool cond, float[2] x) => (float[2] z) {
        y = Identity(x)
        z = If(cond) <
          then_branch = g1 () => (float[2] t) { t = Neg(y) },
          else_branch = g2 () => (float[2] e) {
            e = If(cond) <
              then_branch = g3 () => (float[2] t2) { t2 = Abs(y) },
              else_branch = g4 () => (float[2] e2) { e2 = Relu(x) }>
          }>
      }
    )");
    EliminateIdentity pass;
    CHECK(run(pass, model) == 1);
    const auto& if_node = model.graph().node(0);
    CHECK(inputs_of(body(if_node, 0).node(0)) == Names{"x"});
    CHECK(inputs_of(body(body(if_node, 1).node(0), 0).node(0)) == Names{"x"});
    check_valid(model);
    CHECK(run(pass, model) == 0);
  }

  TEST_CASE("respects a body that defines the same name") {
    // The Loop body's own input "y" shadows the outer y: its reads stay.
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (int64 n, bool cond, float[2] x) => (float[2] z, float[2] out) {
        y = Identity(x)
        z = Neg(y)
        out = Loop(n, cond, x) <body = g (int64 i, bool c, float[2] y) => (bool c2, float[2] y2) {
          c2 = Identity(c)
          y2 = Add(y, y)
        }>
      }
    )");
    EliminateIdentity pass;
    // Only the outer Identity: c2 = Identity(c) returns a body input and stays.
    CHECK(run(pass, model) == 1);
    CHECK(inputs_of(*npucc::test::find_op(model.graph(), "Neg")) == Names{"x"});
    const auto& loop = *npucc::test::find_op(model.graph(), "Loop");
    CHECK(inputs_of(*npucc::test::find_op(body(loop, 0), "Add")) == Names{"y", "y"});
    CHECK(count_ops(body(loop, 0), "Identity") == 1);
  }

  TEST_CASE("keeps an Identity whose input a body would capture") {
    // Renaming the body's read of y to x would read the body's own x.
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (int64 n, bool cond, float[2] x) => (float[2] out) {
        y = Identity(x)
        out = Loop(n, cond, y) <body = g (int64 i, bool c, float[2] x) => (bool c2, float[2] r) {
          c2 = Not(c)
          r = Add(x, y)
        }>
      }
    )");
    EliminateIdentity pass;
    CHECK(run(pass, model) == 0);
    CHECK(count_ops(model.graph(), "Identity") == 1);
  }

  TEST_CASE("keeps an Identity whose output a body returns directly") {
    // Body output names are never changed.
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (bool cond, float[2] x) => (float[2] z) {
        y = Identity(x)
        z = If(cond) <
          then_branch = g1 () => (float[2] y) { },
          else_branch = g2 () => (float[2] e) { e = Neg(x) }>
      }
    )");
    EliminateIdentity pass;
    CHECK(run(pass, model) == 0);
    REQUIRE(model.graph().node_size() == 2);
    CHECK(body(model.graph().node(1), 0).output(0).name() == "y");
    check_valid(model);
  }

  TEST_CASE("inside a body: an Identity returning a body value renames the producer") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (bool cond, float[2] x) => (float[2] z) {
        z = If(cond) <
          then_branch = g1 () => (float[2] t) { a = Neg(x)
                                                t = Identity(a) },
          else_branch = g2 () => (float[2] e) { e = Identity(x) }>
      }
    )");
    EliminateIdentity pass;
    // The else branch returns an outer value through its Identity: kept.
    CHECK(run(pass, model) == 1);
    const auto& then_branch = body(model.graph().node(0), 0);
    REQUIRE(then_branch.node_size() == 1);
    CHECK(then_branch.node(0).output(0) == "t");
    CHECK(then_branch.output(0).name() == "t");
    CHECK(count_ops(body(model.graph().node(0), 1), "Identity") == 1);
    check_valid(model);
    CHECK(run(pass, model) == 0);
  }

  TEST_CASE("removes thousands of chained Identities in one run, quickly") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[2] x) => (float[2] y) {
        y = Identity(x)
      }
    )");
    // x -> Neg -> Identity -> Identity -> Neg -> ... -> y; y = Identity(last Neg).
    auto* graph = model.mutable_graph();
    graph->clear_node();
    constexpr int k_links = 5000;
    std::string previous = "x";
    for (int i = 0; i < k_links; ++i) {
      auto* neg = graph->add_node();
      neg->set_op_type("Neg");
      neg->add_input(previous);
      neg->add_output("n" + std::to_string(i));
      auto* first = graph->add_node();
      first->set_op_type("Identity");
      first->add_input(neg->output(0));
      first->add_output("a" + std::to_string(i));
      auto* second = graph->add_node();
      second->set_op_type("Identity");
      second->add_input(first->output(0));
      second->add_output("b" + std::to_string(i));
      previous = second->output(0);
    }
    auto* last = graph->add_node();
    last->set_op_type("Identity");
    last->add_input(previous);
    last->add_output("y");
    EliminateIdentity pass;
    CHECK(run(pass, model) == 2 * k_links + 1);
    REQUIRE(graph->node_size() == k_links);
    CHECK(inputs_of(graph->node(1)) == Names{"n0"});
    CHECK(graph->node(k_links - 1).output(0) == "y");
    check_valid(model);
    CHECK(run(pass, model) == 0);
  }

  TEST_CASE("opsets 19 to 26: the new Identity versions are removed too") {
    for (int opset : {19, 21, 23, 24, 25, 26}) {
      CAPTURE(opset);
      auto model = npucc::test::parse_text_model(
          "<ir_version: " + std::to_string(npucc::test::ir_version_for(opset)) +
          ", opset_import: [\"\" : " + std::to_string(opset) + R"(]>
        agraph (float[2] x) => (float[2] z) {
          y = Identity(x)
          z = Neg(y)
        }
      )");
      EliminateIdentity pass;
      CHECK(run(pass, model) == 1);
      check_valid(model);
      CHECK(count_ops(model.graph(), "Identity") == 0);
    }
  }
}
