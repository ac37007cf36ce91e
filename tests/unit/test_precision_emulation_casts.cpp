#include "check/validate.h"
#include "precision/emulation.h"
#include "test_support.h"

#include <doctest/doctest.h>
#include <map>

using onnx::TensorProto;

namespace {

// A low graph as the rewrite writes it: the low value m goes back to float32 through the low
// graph's own Cast before a float32 decomposed layer norm (oww's pattern).
std::string low_graph(const std::string& low) {
  std::string text = R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,8] x, float[8,8] w, float[8] s, float[8] b) => (float[2,8] y) {
      xl = Cast <to = LOW> (x)
      wl = Cast <to = LOW> (w)
      m = MatMul(xl, wl)
      f = Cast <to = 1> (m)
      mean = ReduceMean <axes = [-1]> (f)
      d = Sub(f, mean)
      two = Constant <value = float {2.0}> ()
      p = Pow(d, two)
      var = ReduceMean <axes = [-1]> (p)
      eps = Constant <value = float {0.00001}> ()
      ve = Add(var, eps)
      sd = Sqrt(ve)
      n = Div(d, sd)
      ns = Mul(n, s)
      y = Add(ns, b)
    }
  )";
  for (size_t at = text.find("LOW"); at != std::string::npos; at = text.find("LOW")) {
    text.replace(at, 3, low);
  }
  return text;
}

// Parsed and typed, as make_emulation gets the low graph.
onnx::ModelProto typed_low_graph(const char* low) {
  auto model = npucc::test::parse_text_model(low_graph(low));
  npucc::check::infer_shapes_strict(model);
  return model;
}

// Element type of every value after strict inference.
std::map<std::string, int32_t> value_types(onnx::ModelProto& model) {
  npucc::check::infer_shapes_strict(model);
  std::map<std::string, int32_t> types;
  for (const auto* list :
       {&model.graph().input(), &model.graph().value_info(), &model.graph().output()}) {
    for (const auto& value : *list) {
      types[value.name()] = value.type().tensor_type().elem_type();
    }
  }
  return types;
}

int count_noop_casts(onnx::ModelProto& model) {
  auto types = value_types(model);
  int noop = 0;
  for (const auto& node : model.graph().node()) {
    if (node.op_type() == "Cast" && types[node.input(0)] == node.attribute(0).i()) {
      ++noop;
    }
  }
  return noop;
}

int count_op(const onnx::ModelProto& model, const std::string& op_type) {
  int count = 0;
  for (const auto& node : model.graph().node()) {
    count += node.op_type() == op_type ? 1 : 0;
  }
  return count;
}

} // namespace

TEST_SUITE("npucc::precision::make_emulation") {
  TEST_CASE("the low graph's Casts to float32 are the way back: no float32 -> float32 Cast") {
    for (const char* low : {"10", "16"}) {
      CAPTURE(low);
      auto model = typed_low_graph(low);
      auto result = npucc::precision::make_emulation(model);
      CHECK(result.round_trips == 3); // xl, wl (typed by attribute) and m
      npucc::check::check_model(model);
      CHECK(count_noop_casts(model) == 0);
      // Cast to low and back for x, w and m: the way back of m is the low graph's Cast f.
      CHECK(count_op(model, "Cast") == 6);
    }
  }

  TEST_CASE("a bfloat16 value read by a layer norm's ReduceMean goes through a guard") {
    auto bfloat16 = typed_low_graph("16");
    CHECK(npucc::precision::make_emulation(bfloat16).fusion_guards == 1);
    npucc::check::check_model(bfloat16);
    auto types = value_types(bfloat16);
    for (const auto& node : bfloat16.graph().node()) {
      if (node.op_type() == "Max") {
        CHECK(node.input_size() == 1);
        CHECK(node.output(0) == "f");
        CHECK(types[node.input(0)] == TensorProto::FLOAT);
      }
    }
    // ONNX Runtime has a float16 LayerNormalization kernel on the CPU: nothing to guard.
    auto float16 = typed_low_graph("10");
    CHECK(npucc::precision::make_emulation(float16).fusion_guards == 0);
    CHECK(count_op(float16, "Max") == 0);
  }
}
