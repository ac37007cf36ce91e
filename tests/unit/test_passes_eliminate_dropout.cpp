#include "passes/eliminate_dropout.h"
#include "test_passes_support.h"

using npucc::passes::EliminateDropout;
using npucc::test::check_valid;
using npucc::test::count_ops;
using npucc::test::inputs_of;
using npucc::test::run;
using Names = std::vector<std::string>;

TEST_SUITE("npucc::passes::EliminateDropout") {
  TEST_CASE("an inference Dropout without a read mask is removed at every version") {
    for (const char* text : {
             R"(<ir_version: 3, opset_import: ["" : 7]>
                agraph (float[2] x) => (float[2] z) {
                  y, mask = Dropout<ratio = 0.3>(x)
                  z = Neg(y)
                })",
             R"(<ir_version: 5, opset_import: ["" : 10]>
                agraph (float[2] x) => (float[2] z) {
                  y = Dropout(x)
                  z = Neg(y)
                })",
             R"(<ir_version: 7, opset_import: ["" : 12]>
                agraph (float[2] x, float r) => (float[2] z) {
                  y = Dropout(x, r)
                  z = Neg(y)
                })",
             R"(<ir_version: 8, opset_import: ["" : 13]>
                agraph (float[2] x) => (float[2] z) {
                  f = Constant<value = bool {0}>()
                  y, mask = Dropout(x, , f)
                  z = Neg(y)
                })",
         }) {
      auto model = npucc::test::parse_text_model(text);
      EliminateDropout pass;
      CHECK(run(pass, model) == 1);
      CHECK(count_ops(model.graph(), "Dropout") == 0);
      CHECK(inputs_of(*npucc::test::find_op(model.graph(), "Neg")) == Names{"x"});
      check_valid(model);
      CHECK(run(pass, model) == 0);
    }
  }

  TEST_CASE("a Dropout that is a graph output keeps the output's name") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 3, opset_import: ["" : 9]>
      agraph (float[2] x) => (float[2] y) {
        a = Neg(x)
        y, mask = Dropout(a)
      }
    )");
    EliminateDropout pass;
    CHECK(run(pass, model) == 1);
    REQUIRE(model.graph().node_size() == 1);
    CHECK(model.graph().node(0).op_type() == "Neg");
    CHECK(model.graph().node(0).output(0) == "y");
    check_valid(model);
  }

  TEST_CASE("between two interface names it becomes an Identity") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 3, opset_import: ["" : 9]>
      agraph (float[2] x) => (float[2] y) {
        y, mask = Dropout<ratio = 0.5>(x)
      }
    )");
    EliminateDropout pass;
    CHECK(run(pass, model) == 1);
    REQUIRE(model.graph().node_size() == 1);
    const auto& node = model.graph().node(0);
    CHECK(node.op_type() == "Identity");
    CHECK(node.attribute_size() == 0);
    CHECK(node.output_size() == 1);
    check_valid(model);
  }

  TEST_CASE("kept: a read mask, training mode, a version not read") {
    SUBCASE("the mask is read") {
      auto model = npucc::test::parse_text_model(R"(
        <ir_version: 3, opset_import: ["" : 9]>
        agraph (float[2] x) => (float[2] z) {
          y, mask = Dropout(x)
          z = Mul(y, mask)
        }
      )");
      EliminateDropout pass;
      CHECK(run(pass, model) == 0);
    }
    SUBCASE("the mask is a graph output") {
      auto model = npucc::test::parse_text_model(R"(
        <ir_version: 5, opset_import: ["" : 10]>
        agraph (float[2] x) => (float[2] y, bool[2] mask) {
          y, mask = Dropout(x)
        }
      )");
      EliminateDropout pass;
      CHECK(run(pass, model) == 0);
    }
    SUBCASE("the mask is read inside an If branch") {
      auto model = npucc::test::parse_text_model(R"(
        <ir_version: 8, opset_import: ["" : 13]>
        agraph (float[2] x, bool c) => (bool[2] z) {
          y, mask = Dropout(x)
          z = If(c) <then_branch = g1 () => (bool[2] t) { t = Identity(mask) },
                     else_branch = g2 () => (bool[2] e) { e = Not(mask) }>
        }
      )");
      EliminateDropout pass;
      CHECK(run(pass, model) == 0);
    }
    SUBCASE("training_mode is an input or true") {
      for (const char* mode : {"", "t = Constant<value = bool {1}>()"}) {
        std::string text = std::string(R"(
          <ir_version: 8, opset_import: ["" : 13]>
          agraph (float[2] x, bool t0) => (float[2] z) {
            )") + mode +
                           (std::string(mode).empty() ? R"(
            y = Dropout(x, , t0)
            z = Neg(y)
          })"
                                                      : R"(
            y = Dropout(x, , t)
            z = Neg(y)
          })");
        auto model = npucc::test::parse_text_model(text);
        EliminateDropout pass;
        CHECK(run(pass, model) == 0);
      }
    }
    SUBCASE("Dropout-6 without is_test trains") {
      auto model = npucc::test::parse_text_model(R"(
        <ir_version: 3, opset_import: ["" : 6]>
        agraph (float[2] x) => (float[2] z) {
          y = Dropout(x)
          z = Neg(y)
        }
      )");
      EliminateDropout pass;
      CHECK(run(pass, model) == 0);
    }
  }

  TEST_CASE("Dropout-6 with is_test, and Dropouts in a Loop body") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 3, opset_import: ["" : 6]>
      agraph (float[2] x) => (float[2] z) {
        y = Dropout<is_test = 1>(x)
        z = Neg(y)
      }
    )");
    EliminateDropout pass;
    CHECK(run(pass, model) == 1);
    CHECK(count_ops(model.graph(), "Dropout") == 0);

    auto looped = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 13]>
      agraph (float[2] x, int64 n) => (float[3, 2] out) {
        out = Loop(n, ) <body = b (int64 i, bool c) => (bool c2, float[2] s) {
          d = Dropout(x)
          s = Neg(d)
          c2 = Identity(c)
        }>
      }
    )");
    CHECK(run(pass, looped) == 1);
    const auto& body = looped.graph().node(0).attribute(0).g();
    CHECK(count_ops(body, "Dropout") == 0);
    CHECK(inputs_of(*npucc::test::find_op(body, "Neg")) == Names{"x"});
  }
}
