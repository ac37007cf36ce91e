#include "check/validate.h"
#include "npucc/train_mode.h"
#include "precision/compile_precision.h"
#include "test_support.h"

#include <doctest/doctest.h>

namespace {

npucc::precision::PrecisionBuild fast1(const std::string& text) {
  auto model = npucc::test::parse_text_model(text);
  npucc::check::check_and_infer(model, npucc::check::Checker::before);
  npucc::CompileOptions options;
  options.accelerate_train_mode = npucc::parse_accelerate_train_mode("fast1|step|0.9");
  return npucc::precision::build_precision_variants(model, options);
}

std::string warnings_of(const npucc::precision::PrecisionBuild& build) {
  std::string all;
  for (const auto& warning : build.report.at("warnings")) {
    all += warning.get<std::string>() + "\n";
  }
  return all;
}

} // namespace

TEST_SUITE("npucc::precision::compile_precision") {
  TEST_CASE("a low graph with nothing lowered, and a refused raise, are warnings") {
    // Scatter was deprecated at 11: the raise is refused, the Conv stays float32, and the
    // low graph is the high graph.
    auto build = fast1(R"(
      <ir_version: 4, opset_import: ["" : 9]>
      g (float[1,1,2,2] x, float[1,1,1,1] w, int64[1,1,1,1] i, float[1,1,1,1] u)
          => (float[1,1,2,2] y) {
        c = Conv(x, w)
        y = Scatter(c, i, u)
      }
    )");
    REQUIRE(build.graphs.size() == 2);
    CHECK(build.graphs[0].model.SerializeAsString() == build.graphs[1].model.SerializeAsString());
    const std::string warnings = warnings_of(build);
    INFO(warnings);
    CHECK(warnings.find("the low graph stays at opset 9, where 1 Conv cannot be bfloat16: "
                        "raising to opset 22 is refused: ") != std::string::npos);
    CHECK(warnings.find("cannot raise Scatter") != std::string::npos);
    CHECK(warnings.find("no node runs in bfloat16: the low graph computes what "
                        "the high graph does") != std::string::npos);
  }

  TEST_CASE("a lowered graph has neither warning") {
    auto build = fast1(R"(
      <ir_version: 3, opset_import: ["" : 7]>
      g (float[1,1,2,2] x, float[1,1,1,1] w) => (float[1,1,2,2] y) {
        c = Conv(x, w)
        d, mask = Dropout(c)
        y = Relu(d)
      }
    )");
    CHECK(warnings_of(build).empty());
    CHECK(build.report.at("opset").at("raised") == true);
  }
}
