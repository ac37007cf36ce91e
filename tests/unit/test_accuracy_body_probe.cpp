#include "accuracy/body_probe.h"

#include "npucc/error.h"

#include <doctest/doctest.h>

using namespace npucc;

namespace {

onnx::NodeProto* add_node(onnx::GraphProto& graph, const std::string& op,
                          const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs) {
  auto* node = graph.add_node();
  node->set_op_type(op);
  node->set_name(outputs.front() + "_node");
  for (const auto& input : inputs) {
    node->add_input(input);
  }
  for (const auto& output : outputs) {
    node->add_output(output);
  }
  return node;
}

onnx::GraphProto* add_body(onnx::NodeProto& node, const std::string& attribute) {
  auto* proto = node.add_attribute();
  proto->set_name(attribute);
  proto->set_type(onnx::AttributeProto::GRAPH);
  return proto->mutable_g();
}

void add_typed(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& list,
               const std::string& name, int32_t type) {
  auto* value = list.Add();
  value->set_name(name);
  value->mutable_type()->mutable_tensor_type()->set_elem_type(type);
}

// main: If(c) { then: t = Relu(x); Loop { m = Neg(t) } ; else: e = Abs(x) }, and a Scan
// whose body computes s = Sigmoid(xs) and states scan_output_axes.
onnx::ModelProto bodies_model() {
  onnx::ModelProto model;
  auto& main = *model.mutable_graph();
  auto* choose = add_node(main, "If", {"c"}, {"y"});
  auto& then_branch = *add_body(*choose, "then_branch");
  add_node(then_branch, "Relu", {"x"}, {"t"});
  add_typed(*then_branch.mutable_value_info(), "t", onnx::TensorProto::FLOAT16);
  auto* loop = add_node(then_branch, "Loop", {"n", "", "t"}, {"t_final"});
  auto& loop_body = *add_body(*loop, "body");
  add_node(loop_body, "Neg", {"t_in"}, {"m"});
  add_typed(*loop_body.mutable_output(), "cond_out", onnx::TensorProto::BOOL);
  add_typed(*loop_body.mutable_output(), "m", onnx::TensorProto::FLOAT);
  add_typed(*then_branch.mutable_output(), "t_final", onnx::TensorProto::FLOAT);
  auto& else_branch = *add_body(*choose, "else_branch");
  add_node(else_branch, "Abs", {"x"}, {"e"});
  add_typed(*else_branch.mutable_output(), "e", onnx::TensorProto::FLOAT);
  auto* scan = add_node(main, "Scan", {"xs"}, {"s_all"});
  auto* axes = scan->add_attribute();
  axes->set_name("scan_output_axes");
  axes->add_ints(0);
  auto& scan_body = *add_body(*scan, "body");
  add_node(scan_body, "Sigmoid", {"x_t"}, {"s"});
  add_typed(*scan_body.mutable_output(), "s", onnx::TensorProto::FLOAT);
  return model;
}

const onnx::GraphProto& body(const onnx::NodeProto& node, const std::string& attribute) {
  for (const auto& proto : node.attribute()) {
    if (proto.name() == attribute) {
      return proto.g();
    }
  }
  FAIL("no attribute " << attribute);
  throw;
}

accuracy::BodyStep step(const std::string& owner, const std::string& op,
                        const std::string& attribute) {
  return {owner, owner + "_node", op, attribute};
}

} // namespace

TEST_SUITE("npucc::accuracy::body_probe") {
  TEST_CASE("an If branch's value leaves through both branches, the other giving an empty "
            "tensor of its type") {
    auto model = bodies_model();
    accuracy::expose_body_values(model, {{{step("y", "If", "then_branch")}, "t"}}, "p/");
    const auto& main = model.graph();
    REQUIRE(main.output_size() == 1);
    CHECK(main.output(0).name() == "p/0");
    CHECK(main.output(0).type().tensor_type().elem_type() == onnx::TensorProto::FLOAT16);
    const auto& choose = main.node(0);
    REQUIRE(choose.output_size() == 2);
    CHECK(choose.output(1) == "p/0");
    const auto& then_branch = body(choose, "then_branch");
    const auto& else_branch = body(choose, "else_branch");
    CHECK(then_branch.output(then_branch.output_size() - 1).name() ==
          else_branch.output(else_branch.output_size() - 1).name());
    const auto& identity = then_branch.node(then_branch.node_size() - 1);
    CHECK(identity.op_type() == "Identity");
    CHECK(identity.input(0) == "t");
    const auto& empty = else_branch.node(else_branch.node_size() - 1);
    CHECK(empty.op_type() == "Constant");
    CHECK(empty.attribute(0).t().data_type() == onnx::TensorProto::FLOAT16);
    CHECK(empty.attribute(0).t().dims(0) == 0);
  }

  TEST_CASE("a Loop inside an If: a scan output of the loop, then an output of the branches") {
    auto model = bodies_model();
    accuracy::expose_body_values(
        model, {{{step("y", "If", "then_branch"), step("t_final", "Loop", "body")}, "m"}}, "p/");
    const auto& then_branch = body(model.graph().node(0), "then_branch");
    const auto& loop = then_branch.node(1);
    REQUIRE(loop.output_size() == 2); // the carried value, then the new scan output
    CHECK(loop.output(1) == "p/0/1");
    const auto& loop_body = body(loop, "body");
    CHECK(loop_body.output_size() == 3);
    CHECK(then_branch.node(then_branch.node_size() - 1).input(0) == "p/0/1");
    CHECK(model.graph().output(0).name() == "p/0");
    CHECK(accuracy::stacked_axes({step("y", "If", "then_branch"), step("t_final", "Loop", "body")}) == 1);
    CHECK(accuracy::body_graph_name({step("y", "If", "then_branch"),
                                     step("t_final", "Loop", "body")}) ==
          "main/y_node:then_branch/t_final_node:body");
  }

  TEST_CASE("a Scan's stated output axes cover the new scan output") {
    auto model = bodies_model();
    accuracy::expose_body_values(model, {{{step("s_all", "Scan", "body")}, "s"}}, "p/");
    const auto& scan = model.graph().node(1);
    CHECK(scan.output_size() == 2);
    CHECK(scan.attribute(0).ints_size() == 2);
  }

  TEST_CASE("two graphs rewritten with one list read the same names") {
    const std::vector<accuracy::BodyValue> values{{{step("s_all", "Scan", "body")}, "s"},
                                                  {{step("y", "If", "else_branch")}, "e"}};
    CHECK(accuracy::body_output_names(values, "p/") == std::vector<std::string>{"p/0", "p/1"});
  }

  TEST_CASE("a path the model does not hold is refused") {
    auto model = bodies_model();
    CHECK_THROWS_AS(accuracy::expose_body_values(model, {{{step("nothing", "Loop", "body")}, "m"}}),
                    Error);
  }
}
