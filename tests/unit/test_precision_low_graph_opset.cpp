#include "check/validate.h"
#include "opset/raise_opset.h"
#include "precision/low_graph_opset.h"
#include "test_support.h"

#include <doctest/doctest.h>

using npucc::CompileOptions;
using npucc::LowPrecision;
using npucc::precision::low_graph_opset_line;
using npucc::precision::LowGraphRaise;
using npucc::precision::raise_low_graph;

namespace {

onnx::ModelProto typed(const std::string& text) {
  auto model = npucc::test::parse_text_model(text);
  npucc::check::check_and_infer(model, npucc::check::Checker::before);
  return model;
}

const std::string k_cnn13 = R"(
  <ir_version: 7, opset_import: ["" : 13]>
  g (float[1,2,4,4] x, float[2,2,3,3] w) => (float[1,2] y) {
    c = Conv <pads = [1, 1, 1, 1]> (x, w)
    m = ReduceMean <axes = [2, 3], keepdims = 0> (c)
    y = Relu(m)
  }
)";

// BatchNormalization-9 ties scale, bias and statistics to the input's type.
const std::string k_bn9 = R"(
  <ir_version: 4, opset_import: ["" : 9]>
  g (float[1,2,4,4] x, float[2,2,3,3] w, float[2] s, float[2] b, float[2] m, float[2] v)
      => (float[1,2,4,4] y) {
    c = Conv <pads = [1, 1, 1, 1]> (x, w)
    n = BatchNormalization(c, s, b, m, v)
    y = Relu(n)
  }
)";

} // namespace

TEST_SUITE("npucc::precision::low_graph_opset") {
  TEST_CASE("fast1 raises a CNN's low graph to opset 22 and IR 10") {
    auto low = typed(k_cnn13);
    auto report =
        raise_low_graph(low, CompileOptions{}, LowPrecision::bfloat16, LowGraphRaise::yes);
    CHECK(npucc::opset::default_opset(low) == 22);
    CHECK(low.ir_version() == 10);
    CHECK(report.at("raised") == true);
    CHECK(report.at("adapted").at("ReduceMean-18") == 1);
    CHECK(low_graph_opset_line(report).rfind("opset: low graph raised from 13 to 22", 0) == 0);
  }

  TEST_CASE("no bfloat16 raise when no op would gain bfloat16") {
    auto mlp = typed(R"(
      <ir_version: 7, opset_import: ["" : 13]>
      g (float[2,4] x, float[4,4] w) => (float[2,4] y) { m = MatMul(x, w)  y = Relu(m) }
    )");
    auto report =
        raise_low_graph(mlp, CompileOptions{}, LowPrecision::bfloat16, LowGraphRaise::yes);
    CHECK(npucc::opset::default_opset(mlp) == 13);
    CHECK(report.at("raised") == false);
    CHECK(low_graph_opset_line(report).empty());
  }

  TEST_CASE("fast raises a low graph holding a BatchNormalization below opset 15 to 15") {
    auto low = typed(k_bn9);
    auto report =
        raise_low_graph(low, CompileOptions{}, LowPrecision::float16, LowGraphRaise::yes);
    CHECK(npucc::opset::default_opset(low) == 15);
    CHECK(report.at("raised") == true);
    CHECK(report.at("low_graph") == 15);
    CHECK(report.at("adapted").contains("BatchNormalization-14"));
    CHECK(low_graph_opset_line(report) ==
          "opset: low graph raised from 9 to 15 (BatchNormalization float16 with float32 "
          "statistics); high graph at 9");
  }

  TEST_CASE("fast leaves its low graph without BatchNormalization, with --target-opset or "
            "in a single-graph mode") {
    auto cnn = typed(k_cnn13);
    CHECK(raise_low_graph(cnn, CompileOptions{}, LowPrecision::float16, LowGraphRaise::yes)
              .is_null());
    CHECK(npucc::opset::default_opset(cnn) == 13);
    CompileOptions options;
    options.target_opset = 9;
    for (auto raise : {LowGraphRaise::yes, LowGraphRaise::no}) {
      auto low = typed(k_bn9);
      const auto& given = raise == LowGraphRaise::yes ? options : CompileOptions{};
      CHECK(raise_low_graph(low, given, LowPrecision::float16, raise).is_null());
      CHECK(npucc::opset::default_opset(low) == 9);
    }
  }

  TEST_CASE("an explicit --target-opset or a single-graph mode keeps it and recommends 22") {
    CompileOptions options;
    options.target_opset = 13;
    auto low = typed(k_cnn13);
    auto report = raise_low_graph(low, options, LowPrecision::bfloat16, LowGraphRaise::yes);
    CHECK(npucc::opset::default_opset(low) == 13);
    CHECK(report.at("schema_float32").at("Conv") == 1);
    CHECK(low_graph_opset_line(report).find(
              "schema at opset 13: 1 Conv stay float32; --target-opset 22 lowers them") == 0);
    auto single = typed(k_cnn13);
    report = raise_low_graph(single, CompileOptions{}, LowPrecision::bfloat16, LowGraphRaise::no);
    CHECK(npucc::opset::default_opset(single) == 13);
    CHECK(report.at("raised") == false);
  }

  TEST_CASE("a refused raise leaves the graph as it was and says why") {
    auto low = typed(R"(
      <ir_version: 4, opset_import: ["" : 9]>
      g (float[1,1,2,2] x, float[1,1,1,1] w, int64[1,1,1,1] i, float[1,1,1,1] u)
          => (float[1,1,2,2] y) {
        c = Conv(x, w)
        y = Scatter(c, i, u)
      }
    )");
    const std::string before = low.SerializeAsString();
    auto report =
        raise_low_graph(low, CompileOptions{}, LowPrecision::bfloat16, LowGraphRaise::yes);
    CHECK(low.SerializeAsString() == before);
    CHECK(report.at("raised") == false);
    CHECK(report.at("why").get<std::string>().find("cannot raise Scatter") != std::string::npos);
  }
}
