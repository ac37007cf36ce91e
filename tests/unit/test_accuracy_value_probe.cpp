#include "accuracy/value_probe.h"

#include "npucc/error.h"

#include <doctest/doctest.h>

using namespace npucc;

namespace {

onnx::ModelProto probe_model() {
  onnx::ModelProto model;
  auto* graph = model.mutable_graph();
  graph->set_name("g");
  auto* input = graph->add_input();
  input->set_name("x");
  input->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  auto* relu = graph->add_node();
  relu->set_op_type("Relu");
  relu->add_input("x");
  relu->add_output("r");
  auto* cast = graph->add_node();
  cast->set_op_type("Cast");
  cast->add_input("r");
  cast->add_output("r_low");
  auto* to = cast->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::FLOAT16);
  auto* typed = graph->add_value_info();
  typed->set_name("r");
  typed->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::DOUBLE);
  graph->add_output()->set_name("r_low");
  return model;
}

} // namespace

TEST_SUITE("npucc::accuracy::value_probe") {
  TEST_CASE("values become outputs of their stated type, a Cast's type, once") {
    auto model = probe_model();
    accuracy::expose_values(model, {"r", "r_low", "r"});
    const auto& outputs = model.graph().output();
    REQUIRE(outputs.size() == 2); // r_low was an output already; r added once
    CHECK(outputs[1].name() == "r");
    CHECK(outputs[1].type().tensor_type().elem_type() == onnx::TensorProto::DOUBLE);
  }

  TEST_CASE("a Cast's output without value_info gets the Cast's type") {
    auto model = probe_model();
    model.mutable_graph()->clear_output();
    accuracy::expose_values(model, {"r_low"});
    CHECK(model.graph().output(0).type().tensor_type().elem_type() == onnx::TensorProto::FLOAT16);
  }

  TEST_CASE("a name the main graph does not define is refused in one line") {
    auto model = probe_model();
    CHECK_THROWS_WITH_AS(accuracy::expose_values(model, {"nothing"}),
                         doctest::Contains("value 'nothing' is not defined in the main graph"),
                         Error);
  }
}
