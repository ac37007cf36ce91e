#include "passes/node_rewriter.h"
#include "test_passes_support.h"

using npucc::passes::GraphContext;
using npucc::passes::NodeEdit;
using npucc::passes::NodeRewriter;
using npucc::passes::rewrite_nodes;
using npucc::test::count_ops;
using npucc::test::run;
using Names = std::vector<std::string>;

namespace {

// Each node's first output in graph order: what these tests compare.
Names node_names(const onnx::GraphProto& graph) {
  Names names;
  for (const auto& node : graph.node()) {
    names.push_back(node.output(0));
  }
  return names;
}

onnx::NodeProto named_node(const std::string& op_type, const std::string& output) {
  onnx::NodeProto node;
  node.set_op_type(op_type);
  node.add_output(output);
  return node;
}

// Five nodes computing a to e, in a chain.
onnx::ModelProto chain_model() {
  return npucc::test::parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[2] x) => (float[2] e) {
      a = Neg(x)
      b = Relu(a)
      c = Neg(b)
      d = Relu(c)
      e = Neg(d)
    }
  )");
}

// A pattern pass as a test would write one: removes every Relu, in every graph.
class RemoveRelus final : public npucc::passes::Pass {
public:
  const char* name() const override { return "remove_relus"; }
  const char* description() const override { return "test pass"; }
  int64_t run_on_graph(onnx::GraphProto& graph, const GraphContext&) override {
    return rewrite_nodes(graph, [](onnx::NodeProto& node, int) {
      return node.op_type() == "Relu" ? NodeEdit::remove() : NodeEdit::keep();
    });
  }
};

} // namespace

TEST_SUITE("npucc::passes::NodeRewriter") {
  TEST_CASE("removed nodes go and the others keep their order") {
    auto model = chain_model();
    auto& graph = *model.mutable_graph();
    CHECK(rewrite_nodes(graph, [](onnx::NodeProto& node, int) {
            return node.op_type() == "Relu" ? NodeEdit::remove() : NodeEdit::keep();
          }) == 2);
    CHECK(node_names(graph) == Names{"a", "c", "e"});
  }

  TEST_CASE("replacement nodes stand where the node they replace stood") {
    auto model = chain_model();
    auto& graph = *model.mutable_graph();
    SUBCASE("by several nodes") {
      CHECK(rewrite_nodes(graph, [](onnx::NodeProto& node, int) {
              if (node.output(0) != "c") {
                return NodeEdit::keep();
              }
              return NodeEdit::replace_with({named_node("Abs", "c1"), named_node("Abs", "c2")});
            }) == 1);
      CHECK(node_names(graph) == Names{"a", "b", "c1", "c2", "d", "e"});
    }
    SUBCASE("by none, which removes it") {
      CHECK(rewrite_nodes(graph, [](onnx::NodeProto&, int index) {
              return index == 0 ? NodeEdit::replace_with({}) : NodeEdit::keep();
            }) == 1);
      CHECK(node_names(graph) == Names{"b", "c", "d", "e"});
    }
    SUBCASE("first and last, among removals") {
      NodeRewriter rewriter(graph);
      rewriter.replace(4, {named_node("Abs", "e1")});
      rewriter.remove(1);
      rewriter.replace(0, {named_node("Abs", "a1"), named_node("Abs", "a2")});
      CHECK(rewriter.apply() == 3);
      CHECK(node_names(graph) == Names{"a1", "a2", "c", "d", "e1"});
    }
  }

  TEST_CASE("edits wait for apply, so indices stay valid during the walk") {
    auto model = chain_model();
    auto& graph = *model.mutable_graph();
    NodeRewriter rewriter(graph);
    rewriter.remove(3);
    rewriter.remove(3); // counted once
    rewriter.remove(0);
    CHECK(rewriter.is_edited(0));
    CHECK(rewriter.is_edited(3));
    CHECK_FALSE(rewriter.is_edited(1));
    CHECK(rewriter.edited() == 2);
    CHECK(graph.node_size() == 5);
    CHECK(graph.node(3).output(0) == "d");
    CHECK(rewriter.apply() == 2);
    CHECK(node_names(graph) == Names{"b", "c", "e"});
    // apply starts over: a second one changes nothing.
    CHECK(rewriter.apply() == 0);
    CHECK(node_names(graph) == Names{"b", "c", "e"});
  }

  TEST_CASE("no edit leaves the graph as it was, byte for byte") {
    auto model = chain_model();
    const std::string before = model.SerializeAsString();
    CHECK(rewrite_nodes(*model.mutable_graph(),
                        [](onnx::NodeProto&, int) { return NodeEdit::keep(); }) == 0);
    CHECK(model.SerializeAsString() == before);
  }

  TEST_CASE("a pattern pass run by the framework rewrites nodes inside bodies") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[2] x, bool c, int64 n) => (float[2] y, float[2] z) {
        r = Relu(x)
        y = If(c) <
          then_branch = g1 () => (float[2] t) { t1 = Relu(x) t = Neg(t1) },
          else_branch = g2 () => (float[2] e) { e = Neg(x) }>
        z = Loop(n, c, x) <body = g3 (int64 i, bool ci, float[2] v) => (bool co, float[2] w) {
          co = Identity(ci)
          w1 = Relu(v)
          w = Abs(w1)
        }>
      }
    )");
    RemoveRelus pass;
    CHECK(run(pass, model) == 3);
    const auto& graph = model.graph();
    CHECK(node_names(graph) == Names{"y", "z"});
    CHECK(node_names(graph.node(0).attribute(0).g()) == Names{"t"});
    CHECK(node_names(graph.node(0).attribute(1).g()) == Names{"e"});
    CHECK(node_names(graph.node(1).attribute(0).g()) == Names{"co", "w"});
    CHECK(count_ops(graph, "Relu") == 0);
  }
}
