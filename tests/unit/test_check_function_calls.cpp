// Model-local functions as ONNX 1.12's inference must see them (check/function_calls.h):
// overloads (IR 10) named apart and attribute_proto defaults (IR 9) at the calls, for the
// worker's copy only.
#include "check/function_calls.h"
#include "check/validate.h"
#include "model/ir_fields.h"
#include "npucc/error.h"
#include "test_support.h"

#include <doctest/doctest.h>

namespace {

std::string field(int number, const std::string& payload) {
  std::string out(1, static_cast<char>(number << 3 | 2));
  out += static_cast<char>(payload.size()); // payloads here are short
  return out + payload;
}

// y = local.F(x) twice: overload "double" (x * alpha, alpha defaulting to 2) and "sum".
onnx::ModelProto overloaded_model() {
  auto model = npucc::test::parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 17, "local" : 1]>
    g (float[2,3] x) => (float[2,3] a, float[2] b) {
      a = local.F(x)
      b = local.F(x)
    }
    <domain: "local", opset_import: ["" : 17]>
    F (x) => (y) {
      k = Constant<value_float: float = @alpha>()
      y = Mul(x, k)
    }
    <domain: "local", opset_import: ["" : 17]>
    F (x) => (y) {
      axes = Constant<value = int64[1] {1}>()
      y = ReduceSum<keepdims = 0>(x, axes)
    }
  )");
  model.set_ir_version(10);
  onnx::AttributeProto alpha;
  alpha.set_name("alpha");
  alpha.set_type(onnx::AttributeProto::FLOAT);
  alpha.set_f(2.0f);
  REQUIRE(model.mutable_functions(0)->MergeFromString(field(13, "double") +
                                                      field(11, alpha.SerializeAsString())));
  REQUIRE(model.mutable_functions(1)->MergeFromString(field(13, "sum")));
  REQUIRE(model.mutable_graph()->mutable_node(0)->MergeFromString(field(8, "double")));
  REQUIRE(model.mutable_graph()->mutable_node(1)->MergeFromString(field(8, "sum")));
  return model;
}

} // namespace

TEST_SUITE("npucc::check::function_calls") {
  TEST_CASE("exposed for ONNX 1.12, restored to the same bytes") {
    auto model = overloaded_model();
    const std::string before = model.SerializeAsString();
    npucc::check::expose_function_calls(model);
    CHECK(model.functions(0).name() == "F[overload=double]");
    CHECK(model.graph().node(1).op_type() == "F[overload=sum]");
    REQUIRE(model.graph().node(0).attribute_size() == 1);
    CHECK(model.graph().node(0).attribute(0).f() == 2.0f);
    CHECK(model.functions(0).attribute(0) == "alpha");
    npucc::check::restore_function_calls(model);
    CHECK(model.SerializeAsString() == before);
  }

  TEST_CASE("inference uses each call's own overload and the default") {
    auto model = overloaded_model();
    const std::string functions = model.functions(0).SerializeAsString();
    npucc::check::check_and_infer(model, npucc::check::Checker::before_and_after);
    CHECK(model.functions(0).SerializeAsString() == functions);
    CHECK(npucc::model::overload_of(model.graph().node(1)) == "sum");
    CHECK(model.graph().node(0).attribute_size() == 0);
    for (const auto& output : model.graph().output()) {
      CAPTURE(output.name());
      CHECK(output.type().tensor_type().shape().dim_size() == (output.name() == "a" ? 2 : 1));
    }
  }

  TEST_CASE("ambiguous or missing overloads are refused naming the function") {
    auto twice = overloaded_model();
    REQUIRE(twice.mutable_functions(1)->MergeFromString(field(13, "double")));
    CHECK_THROWS_WITH_AS(
        npucc::check::expose_function_calls(twice),
        doctest::Contains("defines function \"local.F\" overload \"double\" twice"), npucc::Error);
    auto missing = overloaded_model();
    REQUIRE(missing.mutable_graph()->mutable_node(1)->MergeFromString(field(8, "triple")));
    CHECK_THROWS_WITH_AS(npucc::check::expose_function_calls(missing),
                         doctest::Contains("overload \"triple\", which the model does not define"),
                         npucc::Error);
  }
}
