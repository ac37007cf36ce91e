#include "npucc/error.h"
#include "precision/keep_dtype.h"
#include "precision/op_lists.h"
#include "schemas/registry.h"
#include "schemas/signature.h"

#include <doctest/doctest.h>
#include <onnx/defs/schema.h>

using npucc::LowPrecision;
using npucc::precision::apply_mixlist;
using npucc::precision::default_op_lists;
using npucc::precision::OpClass;
using npucc::precision::parse_mixlist;

TEST_SUITE("npucc::precision::OpLists") {
  TEST_CASE("built-in lists name real ONNX ops, each in one list") {
    for (auto low : {LowPrecision::float16, LowPrecision::bfloat16}) {
      auto lists = default_op_lists(low);
      std::map<std::string, int> seen;
      for (const auto* list : {&lists.allow, &lists.infer, &lists.clear, &lists.deny}) {
        for (const auto& op : *list) {
          INFO(op);
          CHECK(npucc::schemas::registry().knows_default_op(op));
          ++seen[op];
        }
      }
      for (const auto& [op, count] : seen) {
        INFO(op);
        CHECK(count == 1);
      }
    }
  }

  TEST_CASE("never-lowered and unlisted ops name real ONNX ops") {
    for (const auto& op : npucc::precision::never_lowered_ops()) {
      INFO(op);
      CHECK(npucc::schemas::registry().knows_default_op(op));
    }
    for (const auto& [op, reason] : npucc::precision::unlisted_ops()) {
      INFO(op);
      CHECK(npucc::schemas::registry().knows_default_op(op));
      CHECK(!reason.empty());
      CHECK(default_op_lists(LowPrecision::float16).classify(op) == OpClass::none);
    }
  }

  TEST_CASE("every op introduced in opsets 17 to 26 is in a list, never lowered, or unlisted "
            "with a reason") {
    std::set<std::string> fresh = {"LayerNormalization", "DFT",           "STFT",
                                   "HannWindow",         "HammingWindow", "BlackmanWindow",
                                   "MelWeightMatrix",    "SequenceMap"};
    for (const auto& signature : npucc::schemas::signatures()) {
      if (std::string(signature.domain).empty() &&
          npucc::schemas::find_schema(signature.op, 17, "") == nullptr) {
        fresh.insert(signature.op);
      }
    }
    CHECK(fresh.size() >= 30);
    for (auto low : {LowPrecision::float16, LowPrecision::bfloat16}) {
      auto lists = default_op_lists(low);
      for (const auto& op : fresh) {
        INFO(op);
        bool accounted = lists.classify(op) != OpClass::none ||
                         npucc::precision::never_lowered_ops().count(op) != 0 ||
                         npucc::precision::unlisted_ops().count(op) != 0;
        CHECK(accounted);
      }
    }
  }

  TEST_CASE("the new ops' classes: normalisations float32, activations follow, Attention low") {
    for (auto low : {LowPrecision::float16, LowPrecision::bfloat16}) {
      auto lists = default_op_lists(low);
      for (const char* op : {"LayerNormalization", "GroupNormalization", "RMSNormalization",
                             "CumProd", "DFT", "AffineGrid"}) {
        INFO(op);
        CHECK(lists.classify(op) == OpClass::deny);
      }
      for (const char* op : {"Gelu", "Mish", "Swish", "RotaryEmbedding", "Col2Im"}) {
        INFO(op);
        CHECK(lists.classify(op) == OpClass::infer);
      }
      CHECK(lists.classify("Attention") == OpClass::allow);
      CHECK(lists.classify("TensorScatter") == OpClass::clear);
      CHECK(lists.classify("CenterCropPad") == OpClass::clear);
    }
    CHECK(npucc::precision::never_lowered_ops().count("BitCast") == 1);
  }

  TEST_CASE("the float16 and bfloat16 lists differ where TF's CUDA and oneDNN lists do") {
    auto fp16 = default_op_lists(LowPrecision::float16);
    auto bf16 = default_op_lists(LowPrecision::bfloat16);
    CHECK(fp16.classify("MatMul") == OpClass::allow);
    CHECK(fp16.classify("ReduceMean") == OpClass::deny);
    CHECK(fp16.classify("Softmax") == OpClass::deny);
    CHECK(fp16.classify("Add") == OpClass::infer);
    CHECK(fp16.classify("Transpose") == OpClass::clear);
    CHECK(fp16.classify("Erf") == OpClass::infer);
    CHECK(bf16.classify("Erf") == OpClass::none);
    CHECK(fp16.classify("Size") == OpClass::clear);
    CHECK(bf16.classify("Size") == OpClass::none);
    CHECK(fp16.classify("NonZero") == OpClass::none);
  }

  TEST_CASE("modify_mixlist moves ops between lists; removal makes an op gray") {
    auto lists = default_op_lists(LowPrecision::float16);
    auto edit = parse_mixlist(R"({"white-list": {"to-add": ["Exp"]},
                                  "black-list": {"to-add": ["Relu"], "to-remove": ["Pow"]},
                                  "gray-list": {"to-remove": ["MatMul"]}})",
                              "mix.json");
    auto warnings = apply_mixlist(lists, edit);
    CHECK(lists.classify("Exp") == OpClass::allow);
    CHECK(lists.classify("Relu") == OpClass::deny);
    CHECK(lists.classify("Pow") == OpClass::infer);
    REQUIRE(warnings.size() == 1); // MatMul is not gray
    CHECK(warnings[0].find("MatMul") != std::string::npos);
  }

  TEST_CASE("modify_mixlist errors name the op or key") {
    auto fails_with = [](const std::string& json, const std::string& text) {
      CHECK_THROWS_WITH_AS(parse_mixlist(json, "mix.json"), doctest::Contains(text.c_str()),
                           npucc::Error);
    };
    fails_with(R"({"white-list": {"to-add": ["Exp"]}, "black-list": {"to-add": ["Exp"]}})",
               "\"Exp\" is added to both");
    fails_with(R"({"white-list": {"to-add": ["MatMull"]}})", "unknown ONNX op \"MatMull\"");
    fails_with(R"({"grey-list": {}})", "unknown key \"grey-list\"");
    fails_with(R"({"white-list": {"add": ["Exp"]}})", "unknown key \"white-list.add\"");
    fails_with(R"({"white-list": {"to-add": "Exp"}})", "must be an array");
    fails_with(R"({"white-list": )", "not valid JSON");
    fails_with(R"({"white-list": {"to-add": ["Exp"], "to-remove": ["Exp"]}})",
               "both added to and removed from");
    CHECK_THROWS_WITH_AS(parse_mixlist("[]", "mix.json"),
                         doctest::Contains("--modify-mixlist mix.json"), npucc::Error);
  }

  TEST_CASE("keep-dtype files: trimmed names, comments and blanks skipped, sorted unique") {
    auto names = npucc::precision::parse_keep_dtype("# pinned\n  conv2 \n\nconv1\nconv2\r\n");
    CHECK(names == std::vector<std::string>{"conv1", "conv2"});
  }
}
