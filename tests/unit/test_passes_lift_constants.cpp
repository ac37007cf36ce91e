#include "check/validate.h"
#include "npucc/error.h"
#include "npucc/model.h"
#include "passes/lift_constants.h"
#include "test_passes_support.h"

using npucc::passes::LiftConstants;
using npucc::test::check_valid;
using npucc::test::count_ops;
using npucc::test::run;

namespace {

const onnx::TensorProto* initializer(const onnx::GraphProto& graph, const std::string& name) {
  for (const auto& tensor : graph.initializer()) {
    if (tensor.name() == name) {
      return &tensor;
    }
  }
  return nullptr;
}

std::vector<int64_t> dims_of(const onnx::TensorProto& tensor) {
  return {tensor.dims().begin(), tensor.dims().end()};
}

} // namespace

TEST_SUITE("npucc::passes::LiftConstants") {
  TEST_CASE("turns every kind of dense Constant into an initializer") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[2] x, int64[2] i) => (float[2] y, int64[2] j, string u, string[2] s) {
        w = Constant <value = float[2] {1.5, -2}> ()
        f = Constant <value_float = 0.25> ()
        fs = Constant <value_floats = [1.0, 2.0]> ()
        n = Constant <value_int = 7> ()
        ns = Constant <value_ints = [3, 4]> ()
        t = Constant <value_string = "a"> ()
        ts = Constant <value_strings = ["b", "c"]> ()
        a = Mul(x, w)
        b = Add(a, f)
        y = Sub(b, fs)
        k = Add(i, n)
        j = Mul(k, ns)
        u = Identity(t)
        s = Identity(ts)
      }
    )");
    LiftConstants pass;
    CHECK(run(pass, model) == 7);
    const auto& graph = model.graph();
    CHECK(count_ops(graph, "Constant") == 0);
    CHECK(graph.node_size() == 7);
    REQUIRE(graph.initializer_size() == 7);

    const auto* w = initializer(graph, "w");
    REQUIRE(w != nullptr);
    CHECK(w->data_type() == onnx::TensorProto::FLOAT);
    CHECK(dims_of(*w) == std::vector<int64_t>{2});
    REQUIRE(w->float_data_size() == 2);
    CHECK(w->float_data(1) == -2.0f);

    const auto* f = initializer(graph, "f");
    REQUIRE(f != nullptr);
    CHECK(f->data_type() == onnx::TensorProto::FLOAT);
    CHECK(f->dims_size() == 0);
    CHECK(f->float_data(0) == 0.25f);

    const auto* fs = initializer(graph, "fs");
    REQUIRE(fs != nullptr);
    CHECK(dims_of(*fs) == std::vector<int64_t>{2});
    CHECK(fs->float_data(1) == 2.0f);

    const auto* n = initializer(graph, "n");
    REQUIRE(n != nullptr);
    CHECK(n->data_type() == onnx::TensorProto::INT64);
    CHECK(n->dims_size() == 0);
    CHECK(n->int64_data(0) == 7);

    const auto* ns = initializer(graph, "ns");
    REQUIRE(ns != nullptr);
    CHECK(ns->data_type() == onnx::TensorProto::INT64);
    CHECK(dims_of(*ns) == std::vector<int64_t>{2});
    CHECK(ns->int64_data(0) == 3);

    const auto* t = initializer(graph, "t");
    REQUIRE(t != nullptr);
    CHECK(t->data_type() == onnx::TensorProto::STRING);
    CHECK(t->dims_size() == 0);
    CHECK(t->string_data(0) == "a");

    const auto* ts = initializer(graph, "ts");
    REQUIRE(ts != nullptr);
    CHECK(dims_of(*ts) == std::vector<int64_t>{2});
    CHECK(ts->string_data(1) == "c");

    check_valid(model);
    CHECK(run(pass, model) == 0);
  }

  TEST_CASE("leaves graph outputs, sparse values and attribute references alone") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[2] x) => (float[2] y, float[2] c) {
        c = Constant <value = float[2] {1, 2}> ()
        y = Add(x, c)
      }
    )");
    LiftConstants pass;
    CHECK(run(pass, model) == 0);
    CHECK(count_ops(model.graph(), "Constant") == 1);
    check_valid(model);

    SUBCASE("sparse_value") {
      auto& attribute = *model.mutable_graph()->mutable_output()->Mutable(1);
      attribute.set_name("other");
      auto& node = *model.mutable_graph()->mutable_node(0);
      auto& value = *node.mutable_attribute(0);
      value.set_name("sparse_value");
      value.set_type(onnx::AttributeProto::SPARSE_TENSOR);
      auto* sparse = value.mutable_sparse_tensor();
      sparse->add_dims(2);
      sparse->mutable_values()->set_data_type(onnx::TensorProto::FLOAT);
      sparse->mutable_values()->add_dims(1);
      sparse->mutable_values()->add_float_data(1);
      sparse->mutable_indices()->set_data_type(onnx::TensorProto::INT64);
      sparse->mutable_indices()->add_dims(1);
      sparse->mutable_indices()->add_int64_data(0);
      value.clear_t();
      CHECK(run(pass, model) == 0);
      CHECK(count_ops(model.graph(), "Constant") == 1);
    }
    SUBCASE("an attribute reference (as in a function body)") {
      model.mutable_graph()->mutable_output()->RemoveLast();
      auto& value = *model.mutable_graph()->mutable_node(0)->mutable_attribute(0);
      value.set_ref_attr_name("weights");
      CHECK(run(pass, model) == 0);
      CHECK(count_ops(model.graph(), "Constant") == 1);
    }
  }

  TEST_CASE("does nothing to IR version 3 models, whose initializers must be inputs") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 3, opset_import: ["" : 8]>
      agraph (float[2] x) => (float[2] y) {
        c = Constant <value = float[2] {1, 2}> ()
        y = Add(x, c)
      }
    )");
    LiftConstants pass;
    CHECK(run(pass, model) == 0);
    CHECK(count_ops(model.graph(), "Constant") == 1);
    CHECK(model.graph().initializer_size() == 0);
  }

  TEST_CASE("lifts constants inside If bodies into the body's initializers") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (bool cond, float[2] x) => (float[2] y) {
        y = If(cond) <
          then_branch = g1 () => (float[2] t) {
            k = Constant <value = float[2] {3, 4}> ()
            t = Mul(x, k)
          },
          else_branch = g2 () => (float[2] e) {
            e = Constant <value = float[2] {5, 6}> ()
          }>
      }
    )");
    LiftConstants pass;
    CHECK(run(pass, model) == 1);
    const auto& then_branch = model.graph().node(0).attribute(0).g();
    const auto& else_branch = model.graph().node(0).attribute(1).g();
    CHECK(then_branch.node_size() == 1);
    REQUIRE(then_branch.initializer_size() == 1);
    CHECK(then_branch.initializer(0).name() == "k");
    // The else branch returns its constant as the branch output: kept as a node.
    CHECK(count_ops(else_branch, "Constant") == 1);
    check_valid(model);
    CHECK(run(pass, model) == 0);
  }

  TEST_CASE("ppocrv4_det: all 342 weights held in Constant nodes become initializers") {
    auto model = npucc::read_model(npucc::test::testdata("models/ppocrv4_det.onnx")).proto;
    REQUIRE(count_ops(model.graph(), "Constant") == 342);
    const int nodes = model.graph().node_size();
    LiftConstants pass;
    CHECK(run(pass, model) == 342);
    CHECK(count_ops(model.graph(), "Constant") == 0);
    CHECK(model.graph().initializer_size() == 342);
    CHECK(model.graph().node_size() == nodes - 342);
    check_valid(model);
    CHECK(run(pass, model) == 0);
  }

  TEST_CASE("opsets 19 to 26: Constant's new versions, float8 and int4 values included") {
    for (int opset : {19, 21, 23, 24, 25, 26}) {
      CAPTURE(opset);
      auto model = npucc::test::parse_text_model(
          "<ir_version: " + std::to_string(npucc::test::ir_version_for(opset)) +
          ", opset_import: [\"\" : " + std::to_string(opset) + R"(]>
        agraph (int64[2] i) => (int64[2] j, float[2] y) {
          ns = Constant <value_ints = [3, 4]> ()
          j = Add(i, ns)
          w = Constant <value = float[2] {0, 0}> ()
          y = Cast <to = 1> (w)
        }
      )");
      // w holds two float8e4m3fn values (ONNX 1.12's text format has no such type).
      auto& value = *model.mutable_graph()->mutable_node(2)->mutable_attribute(0)->mutable_t();
      value.clear_float_data();
      value.set_data_type(17);
      value.set_raw_data(std::string("\x38\xb8", 2)); // 1.0, -1.0
      LiftConstants pass;
      CHECK(run(pass, model) == 2);
      check_valid(model);
      CHECK(count_ops(model.graph(), "Constant") == 0);
      const auto* w = initializer(model.graph(), "w");
      REQUIRE(w != nullptr);
      CHECK(w->data_type() == 17);
      CHECK(dims_of(*w) == std::vector<int64_t>{2});
      CHECK(w->raw_data() == std::string("\x38\xb8", 2));
      const auto* ns = initializer(model.graph(), "ns");
      REQUIRE(ns != nullptr);
      CHECK(ns->int64_data_size() == 2);
    }
  }
}

TEST_SUITE("npucc::passes::lift_constants_the_opset_forbids") {
  // PyTorch's exporter of 2017 (ONNX's backend test data): int64 Constants at opset 6, where
  // Constant-1 outputs float16, float or double only.
  onnx::ModelProto old_export(int ir_version, int opset) {
    return npucc::test::parse_text_model("<ir_version: " + std::to_string(ir_version) +
                                         R"(, opset_import: ["" : )" + std::to_string(opset) +
                                         R"(]>
      agraph (float[2,3] x) => (float[3,2] y) {
        s = Constant <value = int64[2] {3, 2}> ()
        r = Reshape(x, s)
        one = Constant <value = float[1] {1.0}> ()
        y = Add(r, one)
      }
    )");
  }

  TEST_CASE("an int64 Constant at opset 6 becomes an initializer and, at IR 3, an input") {
    auto model = old_export(3, 6);
    auto untouched = model;
    CHECK_THROWS_AS(npucc::check::infer_shapes_strict(untouched), npucc::Error);
    CHECK(npucc::passes::lift_constants_the_opset_forbids(model) == 1);
    CHECK(count_ops(model.graph(), "Constant") == 1); // the float one is allowed: kept
    REQUIRE(initializer(model.graph(), "s") != nullptr);
    CHECK(dims_of(*initializer(model.graph(), "s")) == std::vector<int64_t>{2});
    REQUIRE(model.graph().input_size() == 2);
    CHECK(model.graph().input(1).name() == "s");
    CHECK(model.ir_version() == 3);
    check_valid(model);
    CHECK_NOTHROW(npucc::check::infer_shapes_strict(model));
    CHECK(npucc::passes::lift_constants_the_opset_forbids(model) == 0);
  }

  TEST_CASE("from opset 9 Constant takes int64: nothing to lift; from IR 4 no input is added") {
    auto at_opset_9 = old_export(4, 9);
    CHECK(npucc::passes::lift_constants_the_opset_forbids(at_opset_9) == 0);
    auto ir4 = old_export(4, 6);
    CHECK(npucc::passes::lift_constants_the_opset_forbids(ir4) == 1);
    CHECK(ir4.graph().input_size() == 1);
    CHECK_NOTHROW(npucc::check::infer_shapes_strict(ir4));
  }
}
