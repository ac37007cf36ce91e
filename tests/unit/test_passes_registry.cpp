#include "check/validate.h"
#include "npucc/compile.h"
#include "npucc/error.h"
#include "npucc/model.h"
#include "passes/registry.h"
#include "test_passes_support.h"

using npucc::passes::create_pass;
using npucc::passes::create_passes;
using npucc::passes::default_pipeline;
using npucc::passes::FixedPoint;
using npucc::passes::PassManager;
using npucc::test::check_valid;
using npucc::test::count_ops;
using Names = std::vector<std::string>;

namespace {

int64_t changed_by(const npucc::CompileResult& result, const std::string& pass) {
  for (const auto& summary : result.passes) {
    if (summary.name == pass) {
      return summary.changed;
    }
  }
  FAIL("no report for pass " << pass);
  return -1;
}

} // namespace

TEST_SUITE("npucc::passes::registry") {
  TEST_CASE("the default pipeline sorts first and drops opsets last") {
    CHECK(default_pipeline() ==
          Names{"topological_sort", "lift_constants", "fold_shapes", "fold_constants", "fold_if",
                "fold_cast_chains", "eliminate_dropout", "eliminate_identity",
                "eliminate_dead_code", "deduplicate_initializers", "remove_unused_opsets"});
    for (const auto& name : default_pipeline()) {
      auto pass = create_pass(name);
      CHECK(pass->name() == name);
      CHECK(std::string(pass->unit()) != "changes");
    }
    CHECK_THROWS_WITH_AS(create_pass("eliminate_identities"),
                         doctest::Contains("did you mean \"eliminate_identity\""), npucc::Error);
  }

  TEST_CASE("the default pipeline reaches a fixed point on a graph with work for every pass") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
      agraph (bool cond, float[2] x) => (float[2] y) {
        w1 = Constant <value = float[2] {1, 2}> ()
        w2 = Constant <value = float[2] {1, 2}> ()
        wide = Cast <to = 11> (x)
        back = Cast <to = 1> (wide)
        same = Identity(back)
        a = Add(same, w1)
        unused = Mul(a, w2)
        y = If(cond) <
          then_branch = g1 () => (float[2] t) { t = Mul(a, w2) },
          else_branch = g2 () => (float[2] e) { e = Neg(a) }>
      }
    )");
    PassManager manager(create_passes(default_pipeline()));
    std::vector<std::string> lines;
    auto reports = manager.run(model, FixedPoint::yes,
                               [&](const std::string& line) { lines.push_back(line); });
    const auto& graph = model.graph();
    CHECK(count_ops(graph, "Constant") == 0);
    CHECK(count_ops(graph, "Cast") == 0);
    CHECK(count_ops(graph, "Identity") == 0);
    CHECK(count_ops(graph, "Mul") == 0);
    REQUIRE(graph.initializer_size() == 1);
    CHECK(graph.initializer(0).name() == "w1");
    CHECK(graph.node(1).attribute(0).g().node(0).input(1) == "w1");
    CHECK(model.opset_import_size() == 1);
    CHECK_FALSE(lines.empty());
    check_valid(model);

    PassManager again(create_passes(default_pipeline()));
    for (const auto& report : again.run(model)) {
      INFO(report.name);
      CHECK(report.changed == 0);
    }
  }

  TEST_CASE("compiling the real models runs the passes and writes valid graphs") {
    struct Expected {
      const char* model;
      int64_t lifted;
      int64_t merged;
      int64_t opsets_removed;
    };
    const Expected cases[] = {
        {"ppocrv4_det", 342, 101, 0},
        {"ppocr_cls", 250, 34, 0},
        {"silero_vad_legacy", 0, 114, 8},
        {"oww_hello_deepa", 4, 2, 0},
    };
    for (const auto& expected : cases) {
      INFO(expected.model);
      npucc::CompileOptions options;
      options.model_path = npucc::test::testdata(std::string("models/") + expected.model + ".onnx");
      options.output_dir = npucc::test::temp_dir(expected.model);
      auto result = npucc::compile(options);
      CHECK(changed_by(result, "lift_constants") == expected.lifted);
      CHECK(changed_by(result, "deduplicate_initializers") == expected.merged);
      CHECK(changed_by(result, "remove_unused_opsets") == expected.opsets_removed);

      auto written = npucc::read_model(options.output_dir / "high.onnx").proto;
      CHECK(count_ops(written.graph(), "Constant") == 0);
      check_valid(written);
      CHECK_NOTHROW(npucc::check::infer_shapes_strict(written));
      PassManager again(create_passes(default_pipeline()));
      for (const auto& report : again.run(written)) {
        INFO(report.name);
        CHECK(report.changed == 0);
      }
    }
  }

  TEST_CASE("the default pipeline keeps the IR 9-13 fields ONNX 1.12 has no place for") {
    // Function overload/value_info/metadata_props, NodeProto overload/metadata_props,
    // GraphProto/ValueInfoProto/TensorProto metadata_props, ModelProto configuration: the
    // 1.12 protobuf holds them as unknown fields, which every pass must carry along while
    // it sorts, renames, inlines and lifts.
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 10, opset_import: ["" : 21, "local" : 1]>
      agraph (float[2] x) => (float[2] y) <bool cond = {1}> {
        b = Relu(a)
        a = local.Double(x)
        c = Constant <value = float[2] {1, 2}> ()
        r = If(cond) <
          then_branch = g1 () => (float[2] t) { t = Mul(b, c) },
          else_branch = g2 () => (float[2] e) { e = Neg(b) }>
        y = Identity(r)
      }
    )");
    auto add_field = [](google::protobuf::Message& message, int number, const std::string& data) {
      message.GetReflection()->MutableUnknownFields(&message)->AddLengthDelimited(number, data);
    };
    auto fields_of = [](const google::protobuf::Message& message) {
      std::vector<std::pair<int, std::string>> out;
      const auto& set = message.GetReflection()->GetUnknownFields(message);
      for (int i = 0; i < set.field_count(); ++i) {
        out.emplace_back(set.field(i).number(), set.field(i).length_delimited());
      }
      return out;
    };
    using Fields = std::vector<std::pair<int, std::string>>;
    auto& graph = *model.mutable_graph();
    auto& function = *model.add_functions();
    function.set_name("Double");
    function.set_domain("local");
    function.add_input("p");
    function.add_output("q");
    auto& inner = *function.add_node();
    inner.set_op_type("Add");
    inner.add_input("p");
    inner.add_input("p");
    inner.add_output("q");
    auto& function_opset = *function.add_opset_import();
    function_opset.set_version(21);
    add_field(function, 13, "overload-1");
    add_field(function, 14, "function metadata");
    add_field(inner, 9, "function node metadata");
    add_field(*graph.mutable_node(0), 9, "relu metadata"); // moved by the sort
    add_field(*graph.mutable_node(1), 8, "overload-1");    // the call, moved too
    add_field(*graph.mutable_node(3)->mutable_attribute(0)->mutable_g()->mutable_node(0), 9,
              "inlined node metadata"); // Mul, inlined by fold_if
    add_field(*graph.mutable_node(2)->mutable_attribute(0)->mutable_t(), 16, "tensor metadata");
    add_field(*graph.mutable_output(0), 4, "output metadata");
    add_field(graph, 16, "graph metadata");
    add_field(model, 26, "configuration");

    PassManager manager(create_passes(default_pipeline()));
    manager.run(model, FixedPoint::yes);
    CHECK(count_ops(model.graph(), "If") == 0);
    CHECK(count_ops(model.graph(), "Constant") == 0);
    CHECK(fields_of(model) == Fields{{26, "configuration"}});
    CHECK(fields_of(model.graph()) == Fields{{16, "graph metadata"}});
    CHECK(fields_of(model.graph().output(0)) == Fields{{4, "output metadata"}});
    REQUIRE(model.functions_size() == 1);
    CHECK(fields_of(model.functions(0)) == Fields{{13, "overload-1"}, {14, "function metadata"}});
    CHECK(fields_of(model.functions(0).node(0)) == Fields{{9, "function node metadata"}});
    for (const auto& node : model.graph().node()) {
      INFO(node.op_type());
      if (node.op_type() == "Double") {
        CHECK(fields_of(node) == Fields{{8, "overload-1"}});
      } else if (node.op_type() == "Relu") {
        CHECK(fields_of(node) == Fields{{9, "relu metadata"}});
      } else if (node.op_type() == "Mul") {
        CHECK(fields_of(node) == Fields{{9, "inlined node metadata"}});
      }
    }
    REQUIRE(model.graph().initializer_size() == 1);
    CHECK(fields_of(model.graph().initializer(0)) == Fields{{16, "tensor metadata"}});
  }
}
