#include "compiler/validate.h"
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
    CHECK(default_pipeline() == Names{"topological_sort", "lift_constants", "fold_shapes",
                                      "fold_constants", "fold_if", "fold_cast_chains",
                                      "eliminate_identity", "eliminate_dead_code",
                                      "deduplicate_initializers", "remove_unused_opsets"});
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
      CHECK_NOTHROW(npucc::compiler::infer_shapes_strict(written));
      PassManager again(create_passes(default_pipeline()));
      for (const auto& report : again.run(written)) {
        INFO(report.name);
        CHECK(report.changed == 0);
      }
    }
  }
}
