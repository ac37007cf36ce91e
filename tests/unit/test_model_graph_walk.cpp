#include "model/graph_walk.h"
#include "passes/pass_manager.h"
#include "test_support.h"

#include <doctest/doctest.h>

using Names = std::vector<std::string>;

namespace {

// An If whose then branch holds a Loop, then a Scan-free Loop: four graphs, three levels.
onnx::ModelProto nested_model() {
  return npucc::test::parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    main (float[2] x, bool c, int64 n) => (float[2] y, float[2] z) {
      y = If(c) <
        then_branch = then_graph () => (float[2] t) {
          t = Loop(n, c, x) <body = inner_loop (int64 i, bool ci, float[2] v) => (bool co, float[2] w) {
            co = Identity(ci)
            w = Neg(v)
          }>
        },
        else_branch = else_graph () => (float[2] e) { e = Neg(x) }>
      z = Loop(n, c, x) <body = outer_loop (int64 i, bool ci, float[2] v) => (bool co, float[2] w) {
        co = Identity(ci)
        w = Abs(v)
      }>
    }
  )");
}

// Records where the pass manager says each graph sits.
class RecordContexts final : public npucc::passes::Pass {
public:
  const char* name() const override { return "record_contexts"; }
  const char* description() const override { return "test pass"; }
  int64_t run_on_graph(onnx::GraphProto& graph,
                       const npucc::passes::GraphContext& context) override {
    seen.push_back(graph.name() + " depth " + std::to_string(context.depth) +
                   (context.in_loop_body ? " loop" : "") +
                   (context.outer_names.count("x") != 0 ? " sees x" : ""));
    return 0;
  }
  Names seen;
};

} // namespace

TEST_SUITE("npucc::model::walk_graphs") {
  TEST_CASE("for_each_graph visits outer before inner, depth first, with depths") {
    auto model = nested_model();
    Names seen;
    npucc::model::for_each_graph(model.graph(), [&](const onnx::GraphProto& graph, int depth) {
      seen.push_back(graph.name() + " " + std::to_string(depth));
    });
    CHECK(seen == Names{"main 0", "then_graph 1", "inner_loop 2", "else_graph 1", "outer_loop 1"});
  }

  TEST_CASE("the pass manager hands each body the context of where it sits") {
    auto model = nested_model();
    RecordContexts pass;
    npucc::passes::PassManager::run_pass(pass, model);
    CHECK(pass.seen == Names{"main depth 0", "then_graph depth 1 sees x",
                             "inner_loop depth 2 loop sees x", "else_graph depth 1 sees x",
                             "outer_loop depth 1 loop sees x"});
  }

  TEST_CASE("bodies are looked up after the visit, so the visit may rewrite them") {
    auto model = nested_model();
    Names seen;
    npucc::model::walk_graphs(
        *model.mutable_graph(), 0,
        [&](onnx::GraphProto& graph, int&) {
          seen.push_back(graph.name());
          if (graph.name() == "main") {
            graph.mutable_node()->RemoveLast(); // the outer Loop
          }
        },
        [](onnx::GraphProto&, int&) {}, [](const onnx::NodeProto&, onnx::GraphProto&, int&) {});
    CHECK(seen == Names{"main", "then_graph", "inner_loop", "else_graph"});
  }

  TEST_CASE("open runs once per graph with bodies, enter once per body") {
    auto model = nested_model();
    Names opened;
    Names entered;
    npucc::model::walk_graphs(
        model.graph(), std::string(), [](const onnx::GraphProto&, std::string&) {},
        [&](const onnx::GraphProto& graph, std::string& path) {
          opened.push_back(graph.name());
          path += graph.name() + "/";
        },
        [&](const onnx::NodeProto& owner, const onnx::GraphProto& body, std::string& path) {
          entered.push_back(path + owner.op_type() + ":" + body.name());
        });
    CHECK(opened == Names{"main", "then_graph"});
    CHECK(entered == Names{"main/If:then_graph", "main/then_graph/Loop:inner_loop",
                           "main/If:else_graph", "main/Loop:outer_loop"});
  }
}
