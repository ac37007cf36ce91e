#include "passes/eliminate_identity.h"
#include "passes/fold_constants.h"
#include "passes/fold_if.h"
#include "test_passes_fold_support.h"

using npucc::passes::EliminateIdentity;
using npucc::passes::FoldConstants;
using npucc::passes::FoldIf;
using npucc::test::check_valid;
using npucc::test::count_ops;
using npucc::test::run;

namespace {

// An If on Equal(a, b) whose then branch doubles x and else branch negates it.
std::string if_model(const std::string& inits) {
  return R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph (float[2] x) => (float[2] y) <)" +
         inits + R"(> {
      c = Equal(a, b)
      r = If(c) <
        then_branch = g1 () => (float[2] t) <float[1] k = {2}> { t = Mul(x, k) },
        else_branch = g2 () => (float[2] e) { e = Neg(x) }>
      y = Identity(r)
    }
  )";
}

} // namespace

TEST_SUITE("npucc::passes::FoldIf") {
  TEST_CASE("a constant condition inlines the branch it takes") {
    SUBCASE("true takes then_branch") {
      auto model = npucc::test::typed_model(if_model("int64 a = {1}, int64 b = {1}"));
      FoldConstants constants;
      FoldIf fold_if;
      CHECK(run(constants, model) == 1);
      CHECK(run(fold_if, model) == 1);
      CHECK(count_ops(model.graph(), "If") == 0);
      CHECK(count_ops(model.graph(), "Mul") == 1);
      CHECK(npucc::test::has_initializer(model.graph(), "k"));
      check_valid(model);
      CHECK_NOTHROW(npucc::check::infer_shapes_strict(model));
      CHECK(run(fold_if, model) == 0);
    }
    SUBCASE("false takes else_branch") {
      auto model = npucc::test::typed_model(if_model("int64 a = {1}, int64 b = {2}"));
      FoldConstants constants;
      FoldIf fold_if;
      EliminateIdentity identity;
      run(constants, model);
      CHECK(run(fold_if, model) == 1);
      run(identity, model);
      CHECK(count_ops(model.graph(), "If") == 0);
      CHECK(count_ops(model.graph(), "Neg") == 1);
      CHECK(count_ops(model.graph(), "Mul") == 0);
      check_valid(model);
    }
  }

  TEST_CASE("a condition known only at run time stays") {
    auto model = npucc::test::typed_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (bool c, float[2] x) => (float[2] y) {
        r = If(c) <
          then_branch = g1 () => (float[2] t) { t = Abs(x) },
          else_branch = g2 () => (float[2] e) { e = Neg(x) }>
        y = Identity(r)
      }
    )");
    FoldIf fold_if;
    CHECK(run(fold_if, model) == 0);
  }

  TEST_CASE("an overridable initializer is not a constant condition") {
    auto model = npucc::test::typed_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (bool c, float[2] x) => (float[2] y) <bool c = {1}> {
        r = If(c) <
          then_branch = g1 () => (float[2] t) { t = Abs(x) },
          else_branch = g2 () => (float[2] e) { e = Neg(x) }>
        y = Identity(r)
      }
    )");
    FoldIf fold_if;
    CHECK(run(fold_if, model) == 0);
  }

  TEST_CASE("a branch whose names collide with the graph's stays") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[2] x) => (float[2] y, float[2] t) <bool c = {1}> {
        t = Abs(x)
        r = If(c) <
          then_branch = g1 () => (float[2] u) { u = Neg(x) },
          else_branch = g2 () => (float[2] e) { e = Neg(x) }>
        y = Identity(r)
      }
    )");
    // The then branch defines `u` only: renamed to `t` it would clash.
    auto* branch = model.mutable_graph()->mutable_node(1)->mutable_attribute(0)->mutable_g();
    branch->mutable_node(0)->set_output(0, "t");
    branch->mutable_output(0)->set_name("t");
    FoldIf fold_if;
    CHECK(run(fold_if, model) == 0);
  }

  TEST_CASE("opsets 19 to 26: the new If versions fold") {
    for (int opset : {19, 21, 23, 24, 25, 26}) {
      CAPTURE(opset);
      std::string text = if_model("int64 a = {1}, int64 b = {2}");
      text.replace(text.find("ir_version: 8"), 13,
                   "ir_version: " + std::to_string(npucc::test::ir_version_for(opset)));
      text.replace(text.find("\"\" : 17"), 7, "\"\" : " + std::to_string(opset));
      auto model = npucc::test::typed_model(text);
      FoldConstants constants;
      FoldIf fold_if;
      CHECK(run(constants, model) == 1);
      CHECK(run(fold_if, model) == 1);
      CHECK(count_ops(model.graph(), "If") == 0);
      CHECK(count_ops(model.graph(), "Neg") == 1);
      check_valid(model);
    }
  }
}
