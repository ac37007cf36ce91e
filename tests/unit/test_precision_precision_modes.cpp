#include "check/validate.h"
#include "npucc/error.h"
#include "precision/emulation.h"
#include "precision/mixed_precision.h"
#include "precision/precision_modes.h"
#include "precision/report.h"
#include "test_support.h"

#include <doctest/doctest.h>
#include <map>
#include <set>

using npucc::LowPrecision;
using npucc::PrecisionOptions;
using npucc::precision::plan_for_precision_mode;
using npucc::precision::Policy;

namespace {

const char* k_float32_model = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[2,2] x, float[2,2] w) => (float[2,2] y) {
    m = MatMul(x, w)
    y = Relu(m)
  }
)";

const char* k_float16_model = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float16[2,2] x, float16[2,2] w) => (float16[2,2] y) {
    y = MatMul(x, w)
  }
)";

PrecisionOptions v1(const std::string& mode) {
  return {mode, ""};
}
PrecisionOptions v2(const std::string& mode) {
  return {"", mode};
}

} // namespace

TEST_SUITE("npucc::precision::plan_for_precision_mode") {
  TEST_CASE("every mode maps to an ONNX meaning") {
    auto model = npucc::test::parse_text_model(k_float32_model);
    struct Row {
      PrecisionOptions options;
      bool rewrite;
      LowPrecision low;
      Policy policy;
      std::string precision;
    };
    const std::vector<Row> table = {
        {v1(""), false, LowPrecision::float16, Policy::mixed, "float32"},
        {v1("must_keep_origin_dtype"), false, LowPrecision::float16, Policy::mixed, "float32"},
        {v1("force_fp32"), false, LowPrecision::float16, Policy::mixed, "float32"},
        {v1("cube_fp16in_fp32out"), false, LowPrecision::float16, Policy::mixed, "float32"},
        {v1("allow_fp32_to_fp16"), true, LowPrecision::float16, Policy::matrix_only,
         "matrix_float16"},
        {v1("allow_fp32_to_bf16"), true, LowPrecision::bfloat16, Policy::matrix_only,
         "matrix_bfloat16"},
        {v1("force_fp16"), true, LowPrecision::float16, Policy::force, "float16"},
        {v1("allow_mix_precision"), true, LowPrecision::float16, Policy::mixed, "mixed_float16"},
        {v1("allow_mix_precision_fp16"), true, LowPrecision::float16, Policy::mixed,
         "mixed_float16"},
        {v1("allow_mix_precision_bf16"), true, LowPrecision::bfloat16, Policy::mixed,
         "mixed_bfloat16"},
        {v2("fp16"), true, LowPrecision::float16, Policy::force, "float16"},
        {v2("origin"), false, LowPrecision::float16, Policy::mixed, "float32"},
        {v2("cube_fp16in_fp32out"), false, LowPrecision::float16, Policy::mixed, "float32"},
        {v2("mixed_float16"), true, LowPrecision::float16, Policy::mixed, "mixed_float16"},
        {v2("mixed_bfloat16"), true, LowPrecision::bfloat16, Policy::mixed, "mixed_bfloat16"},
    };
    for (const auto& row : table) {
      INFO(row.options.precision_mode << row.options.precision_mode_v2);
      auto plan = plan_for_precision_mode(row.options, model);
      CHECK(plan.rewrite == row.rewrite);
      CHECK(plan.precision == row.precision);
      if (row.rewrite) {
        CHECK(plan.low == row.low);
        CHECK(plan.policy == row.policy);
      }
    }
    CHECK_FALSE(plan_for_precision_mode(v1("cube_fp16in_fp32out"), model).note.empty());
  }

  TEST_CASE("modes npucc cannot honour are refused with the reason") {
    auto model = npucc::test::parse_text_model(k_float16_model);
    CHECK_THROWS_WITH_AS(plan_for_precision_mode(v1("force_fp32"), model),
                         doctest::Contains("does not raise precision"), npucc::Error);
    CHECK_THROWS_WITH_AS(plan_for_precision_mode(v2("cube_fp16in_fp32out"), model),
                         doctest::Contains("computes in float16"), npucc::Error);
    CHECK_THROWS_WITH_AS(plan_for_precision_mode({"force_fp16", "fp16"}, model),
                         doctest::Contains("cannot be given together"), npucc::Error);
  }
}

TEST_SUITE("npucc::precision::make_emulation") {
  TEST_CASE("every low value gets a round trip; the result is float32 and valid") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2,2] x) => (float[2,2] y) {
        w = Constant <value = float[2,2] {1.0, 2.0, 3.0, 4.0}> ()
        m = MatMul(x, w)
        r = Relu(m)
        e = Exp(r)
        y = Identity(e)
      }
    )");
    npucc::check::infer_shapes_strict(model);
    npucc::precision::RewriteOptions options;
    options.low = LowPrecision::bfloat16;
    options.lists = npucc::precision::default_op_lists(LowPrecision::bfloat16);
    npucc::precision::rewrite_mixed_precision(model, options);
    // Low values: x_to_bf16 (a Cast), w (constant), m and r (computed).
    CHECK(npucc::precision::make_emulation(model).round_trips == 4);
    npucc::check::infer_shapes_strict(model);
    npucc::check::check_model(model);
    // One bfloat16 copy per round trip, read by Casts back to float32 only (a copy whose
    // way back nothing read holds the value's own name, as in the low graph).
    std::map<std::string, std::set<std::string>> readers;
    for (const auto& node : model.graph().node()) {
      for (const auto& input : node.input()) {
        readers[input].insert(node.op_type());
      }
    }
    int computed_round_trips = 0;
    int low_copies = 0;
    for (const auto& value : model.graph().value_info()) {
      int32_t type = value.type().tensor_type().elem_type();
      INFO(value.name());
      CHECK((type == onnx::TensorProto::BFLOAT16 || type == onnx::TensorProto::FLOAT));
      if (type == onnx::TensorProto::BFLOAT16) {
        ++low_copies;
        CHECK(readers[value.name()] == std::set<std::string>{"Cast"});
      }
      computed_round_trips += value.name().find("_emu_f32") != std::string::npos ? 1 : 0;
    }
    CHECK(low_copies == 4);
    CHECK(computed_round_trips == 2);
  }
}

TEST_SUITE("npucc::precision::make_emulation") {
  TEST_CASE("low graph inputs (--no-keep-io-types) become float32 with a round trip") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float16[2,2] x, float16[2,2] w) => (float16[2,2] y) {
        y = MatMul(x, w)
      }
    )");
    CHECK(npucc::precision::make_emulation(model).round_trips == 3);
    npucc::check::infer_shapes_strict(model);
    npucc::check::check_model(model);
    CHECK(model.graph().input(0).type().tensor_type().elem_type() == onnx::TensorProto::FLOAT);
    CHECK(model.graph().output(0).type().tensor_type().elem_type() == onnx::TensorProto::FLOAT);
  }

  TEST_CASE("bfloat16 values before opset 13 are refused: Cast has no bfloat16 there") {
    const std::string graph = R"(
      g (bfloat16[2,2] x, float[2,2] w) => (float[2,2] y) {
        y = Identity(w)
      }
    )";
    auto old_opset =
        npucc::test::parse_text_model(R"(<ir_version: 7, opset_import: ["" : 12]>)" + graph);
    try {
      npucc::precision::make_emulation(old_opset);
      FAIL("expected a refusal");
    } catch (const npucc::Error& e) {
      CHECK(std::string(e.what()) == "--emit-emulation: the low graph holds bfloat16 values, "
                                     "and Cast to or from bfloat16 is not defined at the "
                                     "model's opset 12");
    }
    auto new_opset =
        npucc::test::parse_text_model(R"(<ir_version: 8, opset_import: ["" : 13]>)" + graph);
    CHECK(npucc::precision::make_emulation(new_opset).round_trips == 1);
    npucc::check::infer_shapes_strict(new_opset);
    npucc::check::check_model(new_opset);
  }
}

TEST_SUITE("npucc::precision::format_precision_summary") {
  TEST_CASE("short form names the low share, matrix ops, casts and overflowing constants") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2,2] x) => (float[2,2] y) {
        big = Constant <value = float[2,2] {70000.0, 1.0, 1.0, 1.0}> ()
        m = MatMul(x, x)
        r = Relu(m)
        n = Mul(r, big)
        y = Identity(n)
      }
    )");
    npucc::check::infer_shapes_strict(model);
    npucc::precision::RewriteOptions options;
    options.lists = npucc::precision::default_op_lists(LowPrecision::float16);
    auto report = npucc::precision::rewrite_mixed_precision(model, options);
    auto json = npucc::precision::report_json(report, Policy::mixed,
                                              npucc::precision::WeightStorage::low, "");
    auto lines = npucc::precision::format_precision_summary(json);
    REQUIRE(lines.size() >= 4);
    CHECK(lines[0] == "precision: float16 (mixed): 2 of 4 float nodes low; MatMul 1/1");
    CHECK(lines[1].find("overflow 1") != std::string::npos);
    CHECK(lines[3] ==
          "overflow: constant \"big\" has 1 values beyond float16; its consumers stay float32");
    CHECK(npucc::precision::format_precision_summary(nlohmann::json()).empty());
  }
}
