#include "npucc/error.h"
#include "npucc/inspect.h"
#include "test_support.h"
#include "util/file_io.h"

#include <algorithm>
#include <doctest/doctest.h>

namespace {

npucc::InspectReport inspect_text(const std::string& text,
                                  const npucc::InspectOptions& options = {}) {
  npucc::Model model;
  model.proto = npucc::test::parse_text_model(text);
  model.path = "inline.onnx";
  return npucc::inspect_model(std::move(model), options);
}

const npucc::OpUse* find_op(const npucc::InspectReport& report, const std::string& op_type) {
  for (const auto& op : report.ops) {
    if (op.op_type == op_type) {
      return &op;
    }
  }
  return nullptr;
}

const npucc::ParameterGroup* find_group(const npucc::InspectReport& report,
                                        const std::string& source, const std::string& dtype) {
  for (const auto& group : report.parameters) {
    if (group.source == source && group.dtype == dtype) {
      return &group;
    }
  }
  return nullptr;
}

const char* k_nested_if = R"(
  <ir_version: 8, opset_import: ["" : 17], producer_name: "unit", producer_version: "1.0">
  nested (bool c, float[N, 2] x) => (float[N, 2] z) {
    z = If(c) <
      then_branch = t1 () => (float[N, 2] a) {
        a = If(c) <
          then_branch = t2 () => (float[N, 2] b) { b = Relu(x) },
          else_branch = e2 () => (float[N, 2] b2) { b2 = Neg(x) }
        >
      },
      else_branch = e1 () => (float[N, 2] d) { d = Relu(x) }
    >
  }
)";

} // namespace

TEST_SUITE("npucc::inspect_model") {
  TEST_CASE("counts nodes by op in the main graph and in subgraphs, with depth") {
    auto report = inspect_text(k_nested_if);
    CHECK(report.ir_version == 8);
    CHECK(report.producer_name == "unit");
    CHECK(report.producer_version == "1.0");
    CHECK(report.main_graph_nodes == 1);
    CHECK(report.subgraph_nodes == 4);
    CHECK(report.subgraph_count == 4);
    CHECK(report.max_depth == 2);
    const auto* if_op = find_op(report, "If");
    REQUIRE(if_op != nullptr);
    CHECK(if_op->main_graph == 1);
    CHECK(if_op->subgraphs == 1);
    const auto* relu = find_op(report, "Relu");
    REQUIRE(relu != nullptr);
    CHECK(relu->main_graph == 0);
    CHECK(relu->subgraphs == 2);
    CHECK(report.ops.front().count() >= report.ops.back().count());
    REQUIRE(report.opsets.size() == 1);
    CHECK(report.opsets[0].domain == "ai.onnx");
    CHECK(report.opsets[0].version == 17);
  }

  TEST_CASE("sums initializers and Constant-node tensors by dtype") {
    npucc::Model model;
    model.proto = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      params (float[2, 3] x) => (float[2, 3] y) {
        k = Constant <value = float[2, 3] {1, 2, 3, 4, 5, 6}> ()
        s = Constant <value_floats = [1.0, 2.0, 3.0]> ()
        i = Constant <value_int = 7> ()
        a = Add(x, w)
        y = Add(a, k)
      }
    )");
    auto* w = model.proto.mutable_graph()->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(2);
    w->add_dims(3);
    w->set_raw_data(std::string(24, '\0'));
    auto* h = model.proto.mutable_graph()->add_initializer();
    h->set_name("unused_half");
    h->set_data_type(onnx::TensorProto::FLOAT16);
    h->add_dims(10);
    h->set_raw_data(std::string(20, '\0'));
    model.path = "params.onnx";
    auto report = npucc::inspect_model(std::move(model));

    const auto* init_f32 = find_group(report, "initializer", "float32");
    REQUIRE(init_f32 != nullptr);
    CHECK(init_f32->tensors == 1);
    CHECK(init_f32->elements == 6);
    CHECK(init_f32->bytes == 24);
    const auto* init_f16 = find_group(report, "initializer", "float16");
    REQUIRE(init_f16 != nullptr);
    CHECK(init_f16->elements == 10);
    CHECK(init_f16->bytes == 20);
    const auto* const_f32 = find_group(report, "constant", "float32");
    REQUIRE(const_f32 != nullptr);
    CHECK(const_f32->tensors == 2);
    CHECK(const_f32->elements == 9);
    CHECK(const_f32->bytes == 36);
    const auto* const_i64 = find_group(report, "constant", "int64");
    REQUIRE(const_i64 != nullptr);
    CHECK(const_i64->elements == 1);
    CHECK(const_i64->bytes == 8);
    CHECK(report.parameter_elements() == 6 + 10 + 9 + 1);
    CHECK(report.parameter_bytes() == 24 + 20 + 36 + 8);
  }

  TEST_CASE("lists graph inputs without initializers, with symbolic and unknown dims") {
    npucc::Model model;
    model.proto = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      io (float[batch, 3] x, int64[] n) => (float[batch, 3] y) {
        y = Add(x, w)
      }
    )");
    auto* graph = model.proto.mutable_graph();
    auto* w = graph->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(3);
    w->set_raw_data(std::string(12, '\0'));
    // IR 3 style: the initializer is listed among the inputs too.
    auto* listed = graph->add_input();
    listed->set_name("w");
    listed->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    // An input with an unknown dim (neither value nor name) and one of unknown rank.
    auto* odd = graph->add_input();
    odd->set_name("odd");
    odd->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    odd->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim();
    auto* rankless = graph->add_input();
    rankless->set_name("rankless");
    rankless->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT8);
    model.path = "io.onnx";
    auto report = npucc::inspect_model(std::move(model));

    REQUIRE(report.inputs.size() == 4);
    CHECK(report.inputs[0].name == "x");
    CHECK(report.inputs[0].kind == "tensor");
    CHECK(report.inputs[0].dtype == "float32");
    REQUIRE(report.inputs[0].dims.size() == 2);
    CHECK(report.inputs[0].dims[0].param == "batch");
    CHECK_FALSE(report.inputs[0].dims[0].value.has_value());
    CHECK(report.inputs[0].dims[1].value == 3);
    CHECK(report.inputs[1].name == "n");
    CHECK(report.inputs[1].dtype == "int64");
    CHECK(report.inputs[1].dims.empty());
    CHECK(report.inputs[2].name == "odd");
    REQUIRE(report.inputs[2].dims.size() == 1);
    CHECK(report.inputs[2].dims[0].param.empty());
    CHECK_FALSE(report.inputs[2].dims[0].value.has_value());
    CHECK(report.inputs[3].name == "rankless");
    CHECK_FALSE(report.inputs[3].has_shape);
    REQUIRE(report.outputs.size() == 1);
    CHECK(report.outputs[0].name == "y");
  }

  TEST_CASE("lists ops without a schema, but not model-local functions") {
    npucc::Model model;
    model.proto = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17, "com.example" : 1, "local" : 1]>
      custom (float[2] x) => (float[2] y) {
        a = com.example.Fancy(x)
        b = com.example.Fancy(a)
        c = Gelu(b)
        d = com.unknown.Thing(c)
        y = local.Double(d)
      }
    )");
    auto* function = model.proto.add_functions();
    function->set_name("Double");
    function->set_domain("local");
    function->add_input("v");
    function->add_output("w");
    auto* node = function->add_node();
    node->set_op_type("Add");
    node->add_input("v");
    node->add_input("v");
    node->add_output("w");
    function->add_opset_import()->set_version(17);
    model.proto.mutable_graph()->mutable_node(0)->set_name("first_fancy");
    model.path = "custom.onnx";
    auto report = npucc::inspect_model(std::move(model));

    REQUIRE(report.unregistered_ops.size() == 3);
    // Sorted by domain, then op type.
    const auto& fancy = report.unregistered_ops[1];
    CHECK(fancy.domain == "com.example");
    CHECK(fancy.op_type == "Fancy");
    CHECK(fancy.opset == 1);
    REQUIRE(fancy.nodes.size() == 2);
    CHECK(fancy.nodes[0] == "Fancy node \"first_fancy\"");
    CHECK(fancy.nodes[1].find("#1") != std::string::npos);
    const auto& gelu = report.unregistered_ops[0]; // Gelu only exists from opset 20
    CHECK(gelu.domain == "ai.onnx");
    CHECK(gelu.op_type == "Gelu");
    CHECK(gelu.opset == 17);
    const auto& thing = report.unregistered_ops[2];
    CHECK(thing.domain == "com.unknown");
    CHECK(thing.opset == 0);
  }

  TEST_CASE("plans memory once --input-shape fixes the dynamic dims") {
    const char* text = R"(
      <ir_version: 8, opset_import: ["" : 17]>
      dyn (float[N, 256] x) => (float[N, 256] y) {
        a = Relu(x)
        b = Neg(a)
        y = Sigmoid(b)
      }
    )";
    auto dynamic = inspect_text(text);
    CHECK_FALSE(dynamic.memory_plan.available);
    CHECK(dynamic.memory_plan.reason.find("\"N\"") != std::string::npos);
    CHECK(dynamic.memory_plan.reason.find("--input-shape") != std::string::npos);

    npucc::InspectOptions options;
    options.input_shapes = npucc::parse_input_shapes("x:4,256");
    auto fixed = inspect_text(text, options);
    REQUIRE(fixed.memory_plan.available);
    CHECK(fixed.memory_plan.tensors.size() == 3);
    // 4 x 256 floats = 4 KiB each; a and b die early, so two buffers suffice.
    CHECK(fixed.memory_plan.arena_bytes == 2 * 4096);
    CHECK(fixed.memory_plan.unshared_bytes == 3 * 4096);
    // The report still describes the model as stored.
    REQUIRE(fixed.inputs[0].dims.size() == 2);
    CHECK(fixed.inputs[0].dims[0].param == "N");
    REQUIRE(fixed.input_shapes.size() == 1);
    CHECK(fixed.input_shapes[0].name == "x");
  }

  TEST_CASE("refuses hostile shapes, cycles and unknown --input-shape names") {
    const char* text = R"(
      <ir_version: 8, opset_import: ["" : 17]>
      dyn (float[N, M] x) => (float[N, M] y) {
        y = Relu(x)
      }
    )";
    npucc::InspectOptions options;
    options.input_shapes = npucc::parse_input_shapes("x:1099511627776,1099511627776");
    CHECK_THROWS_WITH_AS(inspect_text(text, options), doctest::Contains("inline.onnx: input \"x\""),
                         npucc::Error);
    options.input_shapes = npucc::parse_input_shapes("nope:1");
    try {
      inspect_text(text, options);
      FAIL("expected a usage error");
    } catch (const npucc::Error& e) {
      CHECK(e.status() == npucc::ExitStatus::usage);
      CHECK(std::string(e.what()).find("inline.onnx") == 0);
    }
    CHECK_THROWS_WITH_AS(inspect_text(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      cyc (float[2] x) => (float[2] y) {
        a = Add(x, b)
        b = Neg(a)
        y = Relu(b)
      }
    )"),
                         doctest::Contains("inline.onnx: the graph has a cycle"), npucc::Error);
  }

  TEST_CASE("reads from a path and names the file in errors") {
    auto dir = npucc::test::temp_dir("inspect");
    auto model = npucc::test::parse_text_model(k_nested_if);
    npucc::util::write_file_atomic(dir / "nested.onnx", model.SerializeAsString());
    auto report = npucc::inspect_model(dir / "nested.onnx");
    CHECK(report.path == dir / "nested.onnx");
    CHECK(report.sha256.size() == 64);
    CHECK(report.file_bytes == model.ByteSizeLong());
    npucc::util::write_file_atomic(dir / "empty.onnx", "");
    CHECK_THROWS_WITH_AS(npucc::inspect_model(dir / "empty.onnx"), doctest::Contains("empty.onnx"),
                         npucc::Error);
  }

  TEST_CASE("real model: ppocrv4_det keeps every weight in Constant nodes") {
    auto report = npucc::inspect_model(npucc::test::testdata("models/ppocrv4_det.onnx"));
    CHECK(report.main_graph_nodes == 672);
    CHECK(report.subgraph_count == 0);
    const auto* constant = find_group(report, "constant", "float32");
    REQUIRE(constant != nullptr);
    CHECK(constant->tensors == 342);
    CHECK(constant->elements == 1171841);
    CHECK(find_group(report, "initializer", "float32") == nullptr);
    CHECK_FALSE(report.memory_plan.available);
  }

  TEST_CASE("an opset-21, IR-10 model with the forms of opsets 18 to 21") {
    // ReduceMean-18 (axes an input), Split-18 (num_outputs), Pad-19 (axes, wrap), Cast-19
    // (saturate), a Constant-21 holding int4 values, and Attention, which has no schema
    // before opset 23.
    auto model_text = R"(
      <ir_version: 10, opset_import: ["" : 21]>
      modern (float[2,6] x) => (float[2,1] m, float[2,8] p, float[2,2] s0, float[2,2] s1,
                                 float[2,2] s2, float[3] c, float[2,6] a, float[4] g)
                          <int64[1] axes = {1}, int64[2] pads = {1, 1}, int64[1] last = {1}> {
        m = ReduceMean <keepdims = 1> (x, axes)
        s0, s1, s2 = Split <axis = 1, num_outputs = 3> (x)
        p = Pad <mode = "wrap"> (x, pads, , last)
        k = Constant <value = int32[3] {0, 0, 0}> ()
        c = Cast <to = 1, saturate = 1> (k)
        a = Attention(x, x, x)
        f = Constant <value = int32[4] {56, 56, 56, 56}> ()
        g = Cast <to = 1> (f)
      }
    )";
    npucc::Model model;
    model.proto = npucc::test::parse_text_model(model_text);
    model.path = "modern.onnx";
    // k holds three int4 values, packed two to a byte (ONNX 1.12's text has no int4).
    auto& k = *model.proto.mutable_graph()->mutable_node(3)->mutable_attribute(0)->mutable_t();
    k.clear_int32_data();
    k.set_data_type(22);
    k.set_raw_data(std::string("\x21\x03", 2)); // 1, 2, 3
    // f holds four float8e4m3fn values (1.0), one per int32_data entry.
    model.proto.mutable_graph()->mutable_node(6)->mutable_attribute(0)->mutable_t()->set_data_type(
        17);
    auto report = npucc::inspect_model(std::move(model), {});
    CHECK(report.ir_version == 10);
    REQUIRE(report.opsets.size() == 1);
    CHECK(report.opsets[0].domain == "ai.onnx");
    CHECK(report.opsets[0].version == 21);
    CHECK(report.main_graph_nodes == 8);
    const std::pair<const char*, int64_t> counts[] = {{"ReduceMean", 1}, {"Split", 1},
                                                      {"Pad", 1},        {"Constant", 2},
                                                      {"Cast", 2},       {"Attention", 1}};
    for (const auto& [op, count] : counts) {
      CAPTURE(op);
      const auto* use = find_op(report, op);
      REQUIRE(use != nullptr);
      CHECK(use->main_graph == count);
    }
    // Every op but Attention has a schema at opset 21.
    REQUIRE(report.unregistered_ops.size() == 1);
    CHECK(report.unregistered_ops[0].op_type == "Attention");
    CHECK(report.unregistered_ops[0].opset == 21);
    CHECK(report.outputs.size() == 8);
    // The int4 constant: 3 elements in 2 bytes; the float8 one: 4 in 4 (whatever its
    // int32_data takes in the file); the initializers: 4 int64.
    uint64_t constant_elements = 0;
    uint64_t constant_bytes = 0;
    for (const auto& group : report.parameters) {
      if (group.source == "constant") {
        constant_elements += group.elements;
        constant_bytes += group.bytes;
      }
    }
    CHECK(constant_elements == 7);
    CHECK(constant_bytes == 6);
    const auto* ints = find_group(report, "initializer", "int64");
    REQUIRE(ints != nullptr);
    CHECK(ints->elements == 4);
    CHECK(ints->bytes == 32);
  }
}
