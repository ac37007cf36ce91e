// The precision rewrite on ops of opsets 18 to 26 (npucc's own schemas).
#include "check/validate.h"
#include "model/graph_walk.h"
#include "precision/mixed_precision.h"
#include "test_support.h"

#include <doctest/doctest.h>

using npucc::LowPrecision;
using npucc::precision::RewriteOptions;
using npucc::precision::RewriteReport;
using onnx::TensorProto;

namespace {

struct Lowered {
  onnx::ModelProto model;
  RewriteReport report;
};

Lowered lower(const std::string& text, LowPrecision low) {
  RewriteOptions options;
  options.low = low;
  options.lists = npucc::precision::default_op_lists(low);
  Lowered out{npucc::test::parse_text_model(text), {}};
  npucc::check::check_and_infer(out.model, npucc::check::Checker::before);
  out.report = npucc::precision::rewrite_mixed_precision(out.model, options);
  INFO(out.model.DebugString());
  CHECK_NOTHROW(npucc::check::check_and_infer(out.model, npucc::check::Checker::after));
  return out;
}

int32_t type_of(const onnx::ModelProto& model, const std::string& name) {
  int32_t found = 0;
  npucc::model::for_each_graph(model.graph(), [&](const onnx::GraphProto& graph, int) {
    for (const auto* list : {&graph.input(), &graph.output(), &graph.value_info()}) {
      for (const auto& value : *list) {
        if (value.name() == name) {
          found = value.type().tensor_type().elem_type();
        }
      }
    }
  });
  return found;
}

const onnx::NodeProto* node_of(const onnx::ModelProto& model, const std::string& op) {
  for (const auto& node : model.graph().node()) {
    if (node.op_type() == op) {
      return &node;
    }
  }
  return nullptr;
}

constexpr int32_t f32 = TensorProto::FLOAT;
constexpr int32_t bf16 = TensorProto::BFLOAT16;

} // namespace

TEST_SUITE("npucc::precision::new_ops") {
  TEST_CASE("Attention-23 runs low with its softmax float32; its mask follows Q's type") {
    auto out = lower(R"(
      <ir_version: 10, opset_import: ["" : 23]>
      g (float[1,2,4,8] q, float[1,2,4,8] k, float[1,2,4,8] v, float[4,4] mask)
          => (float[1,2,4,8] y) {
        a = Attention(q, k, v, mask)
        y = Relu(a)
      }
    )",
                     LowPrecision::bfloat16);
    CHECK(type_of(out.model, "a") == bf16);
    CHECK(out.report.nodes["Attention"]["bfloat16"] == 1);
    const auto* attention = node_of(out.model, "Attention");
    REQUIRE(attention != nullptr);
    // ONNX Runtime 1.30 refuses a float32 mask beside a low Q (schema_check.cpp).
    CHECK(type_of(out.model, attention->input(3)) == bf16);
    bool softmax_float32 = false;
    for (const auto& attribute : attention->attribute()) {
      softmax_float32 =
          softmax_float32 || (attribute.name() == "softmax_precision" && attribute.i() == f32);
    }
    CHECK(softmax_float32);
  }

  TEST_CASE("RMSNormalization, GroupNormalization-21 and LayerNormalization stay float32") {
    auto out = lower(R"(
      <ir_version: 10, opset_import: ["" : 23]>
      g (float[1,4,8] x, float[4,4] w, float[8] s, float[4] gs, float[4] gb)
          => (float[1,4,8] y, float[1,4,8] z) {
        m = MatMul(w, x)
        r = RMSNormalization <axis = -1> (m, s)
        l = LayerNormalization <axis = -1> (m, s, s)
        y = Add(r, l)
        n = GroupNormalization <num_groups = 2> (m, gs, gb)
        z = Relu(n)
      }
    )",
                     LowPrecision::bfloat16);
    CHECK(type_of(out.model, "m") == bf16);
    CHECK(type_of(out.model, "r") == f32);
    CHECK(type_of(out.model, "l") == f32);
    CHECK(type_of(out.model, "n") == f32);
    CHECK(out.report.kept_reasons["deny_list"] == 3);
  }

  TEST_CASE("Gelu, Mish and Swish follow their inputs; CumProd stays float32") {
    auto out = lower(R"(
      <ir_version: 10, opset_import: ["" : 26]>
      g (float[4,4] x, float[4,4] w) => (float[4,4] y, float[4,4] z) {
        m = MatMul(x, w)
        a = Gelu(m)
        b = Mish(a)
        c = Swish(b)
        y = MatMul(c, w)
        axis = Constant <value = int64[1] {0}> ()
        p = CumProd(m, axis)
        z = Relu(p)
      }
    )",
                     LowPrecision::bfloat16);
    CHECK(type_of(out.model, "a") == bf16);
    CHECK(type_of(out.model, "b") == bf16);
    CHECK(type_of(out.model, "c") == bf16);
    CHECK(type_of(out.model, "p") == f32);
  }

  TEST_CASE("Conv at opset 22 runs in bfloat16, at opset 21 its schema keeps it float32") {
    const std::string body = R"(
      g (float[1,2,4,4] x, float[2,2,3,3] w) => (float[1,2,2,2] y) {
        c = Conv(x, w)
        y = Relu(c)
      }
    )";
    auto at22 = lower("<ir_version: 10, opset_import: [\"\" : 22]>" + body, LowPrecision::bfloat16);
    CHECK(at22.report.nodes["Conv"]["bfloat16"] == 1);
    auto at21 = lower("<ir_version: 10, opset_import: [\"\" : 21]>" + body, LowPrecision::bfloat16);
    CHECK(at21.report.nodes["Conv"]["float32"] == 1);
    CHECK(at21.report.kept_reasons["schema"] == 1);
  }
}
