#include "schemas/checker.h"
#include "schemas/inference.h"
#include "schemas/registry.h"
#include "schemas/signature.h"

#include <doctest/doctest.h>
#include <onnx/defs/parser.h>
#include <onnx/shape_inference/implementation.h>

using npucc::schemas::find_schema;
using npucc::schemas::registry;

namespace {

onnx::ModelProto parse(const char* text) {
  onnx::ModelProto model;
  auto status = onnx::OnnxParser::Parse(model, text);
  REQUIRE_MESSAGE(status.IsOK(), status.ErrorMessage());
  return model;
}

int32_t inferred_type(const onnx::ModelProto& model, const std::string& name) {
  for (const auto& info : model.graph().value_info()) {
    if (info.name() == name) {
      return info.type().tensor_type().elem_type();
    }
  }
  for (const auto& info : model.graph().output()) {
    if (info.name() == name) {
      return info.type().tensor_type().elem_type();
    }
  }
  return 0;
}

} // namespace

TEST_SUITE("npucc::schemas::Registry") {
  TEST_CASE("every operator version of opsets 18 to 26 is in the registry, with its inference") {
    const auto& inferences = npucc::schemas::inference_table();
    CHECK(npucc::schemas::signatures().size() >= 188);
    for (const auto& signature : npucc::schemas::signatures()) {
      const auto key = npucc::schemas::version_key(signature.domain, signature.op, signature.since);
      INFO(key);
      CHECK(inferences.count(key) == 1);
      const auto* schema = find_schema(signature.op, signature.since, signature.domain);
      REQUIRE(schema != nullptr);
      CHECK(schema->SinceVersion() == signature.since);
      CHECK(schema->has_type_and_shape_inference_function());
    }
    // no inference entry without a signature: a typo in the table would go unnoticed
    CHECK(inferences.size() == npucc::schemas::signatures().size());
  }

  TEST_CASE("a lookup answers the version in force at the opset asked for") {
    CHECK(find_schema("ReduceMean", 17, "")->SinceVersion() == 13);
    CHECK(find_schema("ReduceMean", 18, "")->SinceVersion() == 18);
    CHECK(find_schema("ReduceMean", 26, "ai.onnx")->SinceVersion() == 18);
    CHECK(find_schema("Conv", 21, "")->SinceVersion() == 11);
    CHECK(find_schema("Conv", 22, "")->SinceVersion() == 22);
    CHECK(find_schema("Cast", 26, "")->SinceVersion() == 25);
    CHECK(find_schema("Relu", 26, "")->SinceVersion() == 14);
    CHECK(find_schema("Attention", 22, "") == nullptr);
    CHECK(find_schema("Attention", 23, "")->SinceVersion() == 23);
    CHECK(find_schema("NoSuchOp", 20, "") == nullptr);
  }

  TEST_CASE("bfloat16 Conv is allowed from opset 22 only") {
    onnx::TypeProto bf16;
    bf16.mutable_tensor_type()->set_elem_type(onnx::TensorProto::BFLOAT16);
    const auto bf16_type = onnx::Utils::DataTypeUtils::ToType(bf16);
    CHECK(find_schema("Conv", 21, "")->inputs()[0].GetTypes().count(bf16_type) == 0);
    CHECK(find_schema("Conv", 22, "")->inputs()[0].GetTypes().count(bf16_type) == 1);
  }

  TEST_CASE("the types IR 9 to 13 added are known by name") {
    registry();
    onnx::TypeProto type;
    type.mutable_tensor_type()->set_elem_type(17);
    CHECK(*onnx::Utils::DataTypeUtils::ToType(type) == "tensor(float8e4m3fn)");
    type.mutable_tensor_type()->set_elem_type(22);
    CHECK(*onnx::Utils::DataTypeUtils::ToType(type) == "tensor(int4)");
    CHECK(*onnx::Utils::DataTypeUtils::ToType("tensor(float8e8m0)") == "tensor(float8e8m0)");
  }

  TEST_CASE("ONNX's checker and inference run on an opset-20 model through the registry") {
    auto model = parse(R"(
      <ir_version: 10, opset_import: ["" : 20]>
      g (float[2,3,4] x) => (float[2,1,4] y) {
        axes = Constant <value = int64[1] {1}> ()
        y = ReduceMean <keepdims = 1> (x, axes)
      }
    )");
    npucc::schemas::check_model(model);
    onnx::ShapeInferenceOptions options(true, 1, true);
    onnx::shape_inference::InferShapes(model, &registry(), options);
    CHECK(inferred_type(model, "y") == onnx::TensorProto::FLOAT);
  }

  TEST_CASE("the checker refuses an op version the opset does not have") {
    auto model = parse(R"(
      <ir_version: 10, opset_import: ["" : 21]>
      g (float[2,3] x) => (float[2,3] y) {
        y = Attention (x, x, x)
      }
    )");
    CHECK_THROWS_WITH(npucc::schemas::check_model(model),
                      doctest::Contains("No Op registered for Attention"));
  }

  TEST_CASE("the checker refuses an IR version above 13") {
    auto model = parse(R"(
      <ir_version: 14, opset_import: ["" : 21]>
      g (float[2] x) => (float[2] y) {
        y = Relu (x)
      }
    )");
    CHECK_THROWS_WITH(npucc::schemas::check_model(model), doctest::Contains("ir_version 14"));
  }
}
