#include "passes/fold_constants.h"
#include "passes/fold_shapes.h"
#include "test_passes_fold_support.h"

using npucc::passes::FoldConstants;
using npucc::passes::FoldShapes;
using npucc::test::check_valid;
using npucc::test::count_ops;
using npucc::test::initializer_value;
using npucc::test::Ints;
using npucc::test::run;

namespace {

// z = Identity(y) where y = `node`(x) for an input x of type `input`.
onnx::ModelProto shape_model(const std::string& input, const std::string& node,
                             const std::string& out, int opset = 17) {
  return npucc::test::typed_model("<ir_version: 8, opset_import: [\"\" : " + std::to_string(opset) +
                                  "]>\nagraph (" + input + " x) => (" + out +
                                  " z) {\n y = " + node + "\n z = Identity(y)\n}\n");
}

std::optional<npucc::passes::FoldValue> fold_y(onnx::ModelProto& model, int64_t expected) {
  FoldShapes pass;
  CHECK(run(pass, model) == expected);
  check_valid(model);
  CHECK(run(pass, model) == 0);
  return initializer_value(model.graph(), "y");
}

} // namespace

TEST_SUITE("npucc::passes::FoldShapes") {
  TEST_CASE("Shape of a static tensor") {
    auto model = shape_model("float[2,3]", "Shape(x)", "int64[2]");
    auto y = fold_y(model, 1);
    REQUIRE(y);
    CHECK(y->dims == Ints{2});
    CHECK(y->ints == Ints{2, 3});
    CHECK(count_ops(model.graph(), "Shape") == 0);
  }

  TEST_CASE("Shape with start and end (opset 15)") {
    SUBCASE("start only") {
      auto model = shape_model("float[2,3,4]", "Shape <start = 1> (x)", "int64[2]");
      auto y = fold_y(model, 1);
      REQUIRE(y);
      CHECK(y->ints == Ints{3, 4});
    }
    SUBCASE("negative bounds") {
      auto model = shape_model("float[2,3,4]", "Shape <start = -2, end = -1> (x)", "int64[1]");
      auto y = fold_y(model, 1);
      REQUIRE(y);
      CHECK(y->ints == Ints{3});
    }
    SUBCASE("bounds past the rank are clamped") {
      auto model = shape_model("float[2,3,4]", "Shape <start = -10, end = 10> (x)", "int64[3]");
      auto y = fold_y(model, 1);
      REQUIRE(y);
      CHECK(y->ints == Ints{2, 3, 4});
    }
    SUBCASE("only the static part of a dynamic shape is needed") {
      auto model = shape_model("float[N,3,4]", "Shape <start = 1> (x)", "int64[2]");
      auto y = fold_y(model, 1);
      REQUIRE(y);
      CHECK(y->ints == Ints{3, 4});
    }
  }

  TEST_CASE("Size") {
    auto model = shape_model("float[2,3,4]", "Size(x)", "int64");
    auto y = fold_y(model, 1);
    REQUIRE(y);
    CHECK(y->dims.empty());
    CHECK(y->ints == Ints{24});
  }

  TEST_CASE("dynamic shapes stay") {
    auto shape = shape_model("float[N,3]", "Shape(x)", "int64[2]");
    CHECK_FALSE(fold_y(shape, 0));
    auto size = shape_model("float[2,N]", "Size(x)", "int64");
    CHECK_FALSE(fold_y(size, 0));
  }

  TEST_CASE("an initializer that is also an input may be fed with another shape") {
    auto model = npucc::test::typed_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[N] w) => (int64[1] z) <float[2] w = {1, 2}> {
        y = Shape(w)
        z = Identity(y)
      }
    )");
    CHECK_FALSE(fold_y(model, 0));
  }

  TEST_CASE("reads the outer shape inside an If body") {
    auto model = npucc::test::typed_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (bool cond, float[2,3] x) => (int64[2] y) {
        y = If(cond) <
          then_branch = g1 () => (int64[2] t) {
            s = Shape(x)
            t = Identity(s)
          },
          else_branch = g2 () => (int64[2] e) {
            e = Shape(x)
          }>
      }
    )");
    FoldShapes pass;
    // `e` is the else branch's output: it stays a node.
    CHECK(run(pass, model) == 1);
    auto s = initializer_value(model.graph().node(0).attribute(0).g(), "s");
    REQUIRE(s);
    CHECK(s->ints == Ints{2, 3});
    check_valid(model);
  }

  TEST_CASE("never folds inside a Loop body, Loop-19 to 25 included") {
    for (int opset : {17, 19, 21, 23, 24, 25}) {
      CAPTURE(opset);
      auto model = npucc::test::typed_model(
          "<ir_version: " + std::to_string(npucc::test::ir_version_for(opset)) +
          ", opset_import: [\"\" : " + std::to_string(opset) + R"(]>
      agraph (int64 n, bool c, float[2] x) => (float[2] y) {
        y = Loop(n, c, x) <
          body = g (int64 i, bool ci, float[2] v) => (bool co, float[2] w) {
            co = Identity(ci)
            s = Shape(v)
            f = Cast <to = 1> (s)
            w = Add(v, f)
          }>
      }
    )");
      FoldShapes pass;
      CHECK(run(pass, model) == 0);
    }
  }

  TEST_CASE("with fold_constants and inference, a Reshape gets a static shape") {
    auto model = npucc::test::typed_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[2,3,4] x) => (float[2,12] z) <int64[1] zero = {0}, int64[1] minus = {-1}> {
        s = Shape(x)
        b = Gather(s, zero)
        shape = Concat <axis = 0> (b, minus)
        r = Reshape(x, shape)
        z = Identity(r)
      }
    )");
    FoldShapes shapes;
    FoldConstants constants;
    CHECK(run(shapes, model) == 1);
    CHECK(run(constants, model) == 2);
    npucc::check::infer_shapes_strict(model);
    check_valid(model);
    bool found = false;
    for (const auto& info : model.graph().value_info()) {
      if (info.name() == "r") {
        found = true;
        const auto& shape = info.type().tensor_type().shape();
        REQUIRE(shape.dim_size() == 2);
        CHECK(shape.dim(0).dim_value() == 2);
        CHECK(shape.dim(1).dim_value() == 12);
      }
    }
    CHECK(found);
  }

  TEST_CASE("opsets 19 to 26: Shape and Size of their new versions fold") {
    for (int opset : {19, 21, 23, 24, 25, 26}) {
      CAPTURE(opset);
      const std::string header =
          "<ir_version: " + std::to_string(npucc::test::ir_version_for(opset)) +
          ", opset_import: [\"\" : " + std::to_string(opset) + "]>\n";
      auto model = npucc::test::typed_model(header + R"(
        agraph (float[2,3,4] x) => (int64[2] z, int64 w) {
          y = Shape <start = -2, end = 10> (x)
          z = Identity(y)
          n = Size(x)
          w = Identity(n)
        }
      )");
      FoldShapes pass;
      CHECK(run(pass, model) == 2);
      check_valid(model);
      auto y = initializer_value(model.graph(), "y");
      REQUIRE(y);
      CHECK(y->ints == Ints{3, 4});
      auto n = initializer_value(model.graph(), "n");
      REQUIRE(n);
      CHECK(n->ints == Ints{24});
    }
  }

  TEST_CASE("an opset newer than the one Shape was checked against folds nothing") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 13, opset_import: ["" : 27]>
      agraph (float[2,3] x) => (int64[2] z) {
        y = Shape(x)
        z = Identity(y)
      }
    )");
    FoldShapes pass;
    CHECK(run(pass, model) == 0);
  }
}
