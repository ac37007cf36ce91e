#include "passes/fold_constants.h"
#include "test_passes_fold_support.h"

#include <cmath>

using npucc::passes::FoldConstants;
using npucc::passes::FoldValue;
using npucc::test::check_valid;
using npucc::test::Floats;
using npucc::test::initializer_value;
using npucc::test::Ints;
using npucc::test::run;
using T = onnx::TensorProto;

namespace {

// A graph computing `y` from the initializers `inits` with `nodes`, returning
// z = Identity(y) of type `out` (graph outputs are never folded, so y can be).
std::string graph_text(const std::string& inits, const std::string& nodes, const std::string& out,
                       int opset = 17) {
  return "<ir_version: " + std::to_string(npucc::test::ir_version_for(opset)) +
         ", opset_import: [\"\" : " + std::to_string(opset) + "]>\nagraph (float[1] unused) => (" +
         out + " z) <" + inits + "> {\n" + nodes + "\n z = Identity(y)\n}\n";
}

// Folds the graph; the value `y` became, or nullopt when its node stayed.
std::optional<FoldValue> fold(const std::string& inits, const std::string& nodes,
                              const std::string& out, int opset = 17) {
  auto model = npucc::test::typed_model(graph_text(inits, nodes, out, opset));
  FoldConstants pass;
  int64_t changed = run(pass, model);
  check_valid(model);
  npucc::check::infer_shapes_strict(model);
  auto y = initializer_value(model.graph(), "y");
  CHECK((changed > 0) == y.has_value());
  CHECK(run(pass, model) == 0);
  return y;
}

} // namespace

TEST_SUITE("npucc::passes::FoldConstants") {
  TEST_CASE("Cast") {
    SUBCASE("int64 to float") {
      auto y = fold("int64[3] a = {1, -2, 3}", "y = Cast <to = 1> (a)", "float[3]");
      REQUIRE(y);
      CHECK(y->type == T::FLOAT);
      CHECK(y->floats == Floats{1.0F, -2.0F, 3.0F});
    }
    SUBCASE("float to int64 truncates toward zero") {
      auto y = fold("float[3] a = {1.7, -1.7, 2.5}", "y = Cast <to = 7> (a)", "int64[3]");
      REQUIRE(y);
      CHECK(y->ints == Ints{1, -1, 2});
    }
    SUBCASE("int32 to bool") {
      auto y = fold("int32[3] a = {0, 5, -1}", "y = Cast <to = 9> (a)", "bool[3]");
      REQUIRE(y);
      CHECK(y->type == T::BOOL);
      CHECK(y->ints == Ints{0, 1, 1});
    }
    SUBCASE("out of range is left to the runtime") {
      CHECK_FALSE(fold("int64[1] a = {3000000000}", "y = Cast <to = 6> (a)", "int32[1]"));
      CHECK_FALSE(fold("float[1] a = {1e20}", "y = Cast <to = 7> (a)", "int64[1]"));
    }
    SUBCASE("unsupported target type") {
      CHECK_FALSE(fold("int64[1] a = {1}", "y = Cast <to = 11> (a)", "double[1]"));
    }
  }

  TEST_CASE("Concat") {
    SUBCASE("1-D") {
      auto y =
          fold("int64[2] a = {1, 2}, int64[1] b = {3}", "y = Concat <axis = 0> (a, b)", "int64[3]");
      REQUIRE(y);
      CHECK(y->ints == Ints{1, 2, 3});
    }
    SUBCASE("inner axis, negative") {
      auto y = fold("int64[2,1] a = {1, 2}, int64[2,2] b = {3, 4, 5, 6}",
                    "y = Concat <axis = -1> (a, b)", "int64[2,3]");
      REQUIRE(y);
      CHECK(y->dims == Ints{2, 3});
      CHECK(y->ints == Ints{1, 3, 4, 2, 5, 6});
    }
  }

  TEST_CASE("Gather") {
    SUBCASE("negative indices count from the end") {
      auto y = fold("int64[4] a = {10, 20, 30, 40}, int64[2] i = {3, -1}", "y = Gather(a, i)",
                    "int64[2]");
      REQUIRE(y);
      CHECK(y->ints == Ints{40, 40});
    }
    SUBCASE("a scalar index drops the axis") {
      auto y = fold("int64[4] a = {10, 20, 30, 40}, int64 i = {1}", "y = Gather(a, i)", "int64");
      REQUIRE(y);
      CHECK(y->dims.empty());
      CHECK(y->ints == Ints{20});
    }
    SUBCASE("axis 1") {
      auto y = fold("float[2,3] a = {1, 2, 3, 4, 5, 6}, int32[1] i = {2}",
                    "y = Gather <axis = 1> (a, i)", "float[2,1]");
      REQUIRE(y);
      CHECK(y->dims == Ints{2, 1});
      CHECK(y->floats == Floats{3.0F, 6.0F});
    }
    SUBCASE("out of range stays") {
      CHECK_FALSE(fold("int64[2] a = {1, 2}, int64[1] i = {2}", "y = Gather(a, i)", "int64[1]"));
    }
  }

  TEST_CASE("Unsqueeze and Squeeze") {
    SUBCASE("Unsqueeze with an axes input (opset 13)") {
      auto y = fold("int64[2] a = {5, 6}, int64[2] axes = {0, -1}", "y = Unsqueeze(a, axes)",
                    "int64[1,2,1]");
      REQUIRE(y);
      CHECK(y->dims == Ints{1, 2, 1});
      CHECK(y->ints == Ints{5, 6});
    }
    SUBCASE("Unsqueeze with an axes attribute (opset 11)") {
      auto y = fold("int64 a = {5}", "y = Unsqueeze <axes = [0]> (a)", "int64[1]", 11);
      REQUIRE(y);
      CHECK(y->dims == Ints{1});
    }
    SUBCASE("Squeeze with axes") {
      auto y = fold("int64[1,2,1] a = {5, 6}, int64[1] axes = {0}", "y = Squeeze(a, axes)",
                    "int64[2,1]");
      REQUIRE(y);
      CHECK(y->dims == Ints{2, 1});
    }
    SUBCASE("Squeeze without axes removes every 1") {
      auto y = fold("int64[1,2,1] a = {5, 6}", "y = Squeeze(a)", "int64[2]");
      REQUIRE(y);
      CHECK(y->dims == Ints{2});
      CHECK(y->ints == Ints{5, 6});
    }
  }

  TEST_CASE("Slice") {
    const std::string data = "int64[5] a = {0, 1, 2, 3, 4}, ";
    SUBCASE("end past the dim is clamped") {
      auto y = fold(data + "int64[1] s = {1}, int64[1] e = {9223372036854775807}",
                    "y = Slice(a, s, e)", "int64[4]");
      REQUIRE(y);
      CHECK(y->ints == Ints{1, 2, 3, 4});
    }
    SUBCASE("negative step from the back") {
      auto y = fold(data + "int64[1] s = {-1}, int64[1] e = {-9223372036854775807}, "
                           "int64[1] ax = {0}, int64[1] st = {-2}",
                    "y = Slice(a, s, e, ax, st)", "int64[3]");
      REQUIRE(y);
      CHECK(y->ints == Ints{4, 2, 0});
    }
    SUBCASE("negative start and end") {
      auto y =
          fold(data + "int64[1] s = {-3}, int64[1] e = {-1}", "y = Slice(a, s, e)", "int64[2]");
      REQUIRE(y);
      CHECK(y->ints == Ints{2, 3});
    }
    SUBCASE("inner axis of a matrix") {
      auto y = fold("float[2,3] a = {1, 2, 3, 4, 5, 6}, int64[1] s = {1}, int64[1] e = {3}, "
                    "int64[1] ax = {-1}",
                    "y = Slice(a, s, e, ax)", "float[2,2]");
      REQUIRE(y);
      CHECK(y->dims == Ints{2, 2});
      CHECK(y->floats == Floats{2.0F, 3.0F, 5.0F, 6.0F});
    }
    SUBCASE("attributes before opset 10") {
      auto y = fold("int64[5] a = {0, 1, 2, 3, 4}", "y = Slice <starts = [1], ends = [3]> (a)",
                    "int64[2]", 9);
      REQUIRE(y);
      CHECK(y->ints == Ints{1, 2});
    }
    SUBCASE("empty result") {
      auto y = fold(data + "int64[1] s = {3}, int64[1] e = {1}", "y = Slice(a, s, e)", "int64[0]");
      REQUIRE(y);
      CHECK(y->dims == Ints{0});
    }
  }

  TEST_CASE("Reshape") {
    const std::string data = "int64[2,3] a = {1, 2, 3, 4, 5, 6}, ";
    SUBCASE("-1 is inferred") {
      auto y = fold(data + "int64[2] s = {3, -1}", "y = Reshape(a, s)", "int64[3,2]");
      REQUIRE(y);
      CHECK(y->dims == Ints{3, 2});
      CHECK(y->ints == Ints{1, 2, 3, 4, 5, 6});
    }
    SUBCASE("0 copies the input's dim") {
      auto y = fold(data + "int64[3] s = {0, 3, 1}", "y = Reshape(a, s)", "int64[2,3,1]");
      REQUIRE(y);
      CHECK(y->dims == Ints{2, 3, 1});
    }
  }

  TEST_CASE("arithmetic") {
    SUBCASE("Add broadcasts") {
      auto y =
          fold("int64[2,1] a = {1, 2}, int64[3] b = {10, 20, 30}", "y = Add(a, b)", "int64[2,3]");
      REQUIRE(y);
      CHECK(y->dims == Ints{2, 3});
      CHECK(y->ints == Ints{11, 21, 31, 12, 22, 32});
    }
    SUBCASE("Sub and Mul on int32") {
      auto sub = fold("int32[2] a = {5, 1}, int32 b = {3}", "y = Sub(a, b)", "int32[2]");
      REQUIRE(sub);
      CHECK(sub->ints == Ints{2, -2});
      auto mul = fold("int32[2] a = {5, 1}, int32 b = {-3}", "y = Mul(a, b)", "int32[2]");
      REQUIRE(mul);
      CHECK(mul->ints == Ints{-15, -3});
    }
    SUBCASE("integer Div truncates toward zero") {
      auto y = fold("int64[2] a = {7, -7}, int64[1] b = {2}", "y = Div(a, b)", "int64[2]");
      REQUIRE(y);
      CHECK(y->ints == Ints{3, -3});
    }
    SUBCASE("float Div rounds as float") {
      auto y = fold("float[1] a = {1}, float[1] b = {3}", "y = Div(a, b)", "float[1]");
      REQUIRE(y);
      CHECK(y->floats == Floats{1.0F / 3.0F});
    }
    SUBCASE("division by zero and overflow stay") {
      CHECK_FALSE(fold("int64[1] a = {1}, int64[1] b = {0}", "y = Div(a, b)", "int64[1]"));
      CHECK_FALSE(fold("int64[1] a = {9223372036854775807}, int64[1] b = {1}", "y = Add(a, b)",
                       "int64[1]"));
      CHECK_FALSE(fold("int32[1] a = {2147483647}, int32[1] b = {2}", "y = Mul(a, b)", "int32[1]"));
    }
  }

  TEST_CASE("Equal and Where") {
    auto equal = fold("int64[3] a = {1, 2, 3}, int64[1] b = {2}", "y = Equal(a, b)", "bool[3]");
    REQUIRE(equal);
    CHECK(equal->type == T::BOOL);
    CHECK(equal->ints == Ints{0, 1, 0});
    auto where = fold("bool[3] c = {1, 0, 1}, int64[3] a = {1, 2, 3}, int64[1] b = {9}",
                      "y = Where(c, a, b)", "int64[3]");
    REQUIRE(where);
    CHECK(where->ints == Ints{1, 9, 3});
  }

  TEST_CASE("ConstantOfShape and Range") {
    SUBCASE("ConstantOfShape with a value") {
      auto y = fold("int64[2] s = {2, 3}", "y = ConstantOfShape <value = int64[1] {7}> (s)",
                    "int64[2,3]");
      REQUIRE(y);
      CHECK(y->dims == Ints{2, 3});
      CHECK(y->ints == Ints(6, 7));
    }
    SUBCASE("ConstantOfShape defaults to float zeros") {
      auto y = fold("int64[1] s = {2}", "y = ConstantOfShape(s)", "float[2]");
      REQUIRE(y);
      CHECK(y->floats == Floats{0.0F, 0.0F});
    }
    SUBCASE("integer Range, both directions") {
      auto up =
          fold("int64 a = {0}, int64 b = {10}, int64 d = {3}", "y = Range(a, b, d)", "int64[4]");
      REQUIRE(up);
      CHECK(up->ints == Ints{0, 3, 6, 9});
      auto down =
          fold("int32 a = {5}, int32 b = {0}, int32 d = {-2}", "y = Range(a, b, d)", "int32[3]");
      REQUIRE(down);
      CHECK(down->ints == Ints{5, 3, 1});
    }
    SUBCASE("float Range is left to the runtime") {
      CHECK_FALSE(
          fold("float a = {0}, float b = {1}, float d = {0.25}", "y = Range(a, b, d)", "float[4]"));
    }
  }

  TEST_CASE("Expand") {
    SUBCASE("to a bigger shape") {
      auto y = fold("int64[2,1] a = {1, 2}, int64[2] s = {2, 3}", "y = Expand(a, s)", "int64[2,3]");
      REQUIRE(y);
      CHECK(y->dims == Ints{2, 3});
      CHECK(y->ints == Ints{1, 1, 1, 2, 2, 2});
    }
    SUBCASE("a shape of lower rank or with ones keeps the input's dims") {
      auto y = fold("float[1,3] a = {1, 2, 3}, int64[3] s = {2, 1, 1}", "y = Expand(a, s)",
                    "float[2,1,3]");
      REQUIRE(y);
      CHECK(y->dims == Ints{2, 1, 3});
      CHECK(y->floats == Floats{1, 2, 3, 1, 2, 3});
    }
  }

  TEST_CASE("chains fold in one run") {
    auto y = fold("int64[2] a = {4, 5}, int64[1] i = {1}, int64[1] axes = {0}",
                  "g = Gather(a, i)\n sq = Squeeze(g, axes)\n u = Unsqueeze(sq, axes)\n"
                  "y = Concat <axis = 0> (u, a)",
                  "int64[3]");
    REQUIRE(y);
    CHECK(y->ints == Ints{5, 4, 5});
  }

  TEST_CASE("oversize tensors are never folded or read") {
    SUBCASE("a result over the cap") {
      CHECK_FALSE(fold("int64[2] s = {300, 300}", "y = ConstantOfShape(s)", "float[300,300]"));
    }
    SUBCASE("an input over the cap (a weight)") {
      auto model = npucc::test::parse_text_model(
          graph_text("float[1] w = {0}, int64[1] s = {-1}", "y = Reshape(w, s)", "float[70000]"));
      auto& weight = *model.mutable_graph()->mutable_initializer(0);
      weight.set_dims(0, 70000);
      weight.clear_float_data();
      weight.set_raw_data(std::string(70000 * sizeof(float), '\0'));
      npucc::check::infer_shapes_strict(model);
      FoldConstants pass;
      CHECK(run(pass, model) == 0);
      CHECK(model.graph().initializer_size() == 2);
    }
  }

  TEST_CASE("what can change at run time stays") {
    SUBCASE("an initializer that is also a graph input can be overridden") {
      auto model = npucc::test::typed_model(R"(
        <ir_version: 8, opset_import: ["" : 17]>
        agraph (int64[2] a) => (int64[2] z) <int64[2] a = {1, 2}, int64[2] b = {3, 4}> {
          y = Add(a, b)
          z = Identity(y)
        }
      )");
      FoldConstants pass;
      CHECK(run(pass, model) == 0);
    }
    SUBCASE("graph outputs stay computed by nodes") {
      auto model = npucc::test::typed_model(R"(
        <ir_version: 8, opset_import: ["" : 17]>
        agraph (float[1] x) => (int64[2] y) <int64[2] a = {1, 2}, int64[2] b = {3, 4}> {
          y = Add(a, b)
        }
      )");
      FoldConstants pass;
      CHECK(run(pass, model) == 0);
    }
  }

  TEST_CASE("folds inside an If body, from the body's own initializers") {
    auto model = npucc::test::typed_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (bool cond, float[2,3] x) => (float[6] y) {
        y = If(cond) <
          then_branch = g1 () => (float[6] t) <int64[1] a = {2}, int64[1] b = {3}> {
            s = Mul(a, b)
            t = Reshape(x, s)
          },
          else_branch = g2 () => (float[6] e) <int64[1] f = {6}> {
            e = Reshape(x, f)
          }>
      }
    )");
    FoldConstants pass;
    CHECK(run(pass, model) == 1);
    const auto& body = model.graph().node(0).attribute(0).g();
    auto s = initializer_value(body, "s");
    REQUIRE(s);
    CHECK(s->ints == Ints{6});
    check_valid(model);
  }

  TEST_CASE("opsets 18 to 26: the versions they introduce fold as the older ones did") {
    // ConstantOfShape-20/21/23/24/25, Reshape-19..25, Squeeze/Unsqueeze-21..25, Cast-19..25
    // (saturate only concerns float8 targets) and Equal-19 only widen their types.
    for (int opset : {18, 19, 20, 21, 22, 23, 24, 25, 26}) {
      CAPTURE(opset);
      const std::string saturate = opset >= 19 ? ", saturate = 1" : "";
      auto y = fold("int64[2] s = {2, 3}, int64[1] axes = {0}, int64[1] flat = {-1}",
                    "c = ConstantOfShape <value = int64[1] {7}> (s)\n r = Reshape(c, flat)\n"
                    " u = Unsqueeze(r, axes)\n q = Squeeze(u, axes)\n"
                    " f = Cast <to = 1" +
                        saturate +
                        "> (q)\n e = Equal(f, f)\n"
                        " y = Where(e, q, r)",
                    "int64[6]", opset);
      REQUIRE(y);
      CHECK(y->dims == Ints{6});
      CHECK(y->ints == Ints{7, 7, 7, 7, 7, 7});
    }
  }

  TEST_CASE("opsets 19 to 26: what folding cannot compute exactly stays") {
    // Read as parsed: the pass needs only the initializers, not inference's types.
    auto folds = [](const std::string& inits, const std::string& nodes, int opset) {
      auto model = npucc::test::parse_text_model(graph_text(inits, nodes, "float[2]", opset));
      FoldConstants pass;
      return run(pass, model);
    };
    SUBCASE("Cast to float8, with or without saturation") {
      for (const char* cast : {"Cast <to = 17, saturate = 0>", "Cast <to = 19>"}) {
        CAPTURE(cast);
        CHECK(folds("float[2] a = {1000, 0.1}",
                    std::string("y8 = ") + cast + " (a)\n y = Cast <to = 1> (y8)", 21) == 0);
      }
    }
    SUBCASE("Cast to int4, uint4, float4e2m1 and float8e8m0") {
      for (int to : {21, 22, 23, 24}) {
        CAPTURE(to);
        CHECK(folds("float[2] a = {3, 1}",
                    "y4 = Cast <to = " + std::to_string(to) +
                        ", round_mode = \"up\"> (a)\n"
                        " y = Cast <to = 1> (y4)",
                    25) == 0);
      }
    }
    SUBCASE("ConstantOfShape filled with a float8 value") {
      auto model = npucc::test::parse_text_model(
          graph_text("int64[1] s = {2}",
                     "c = ConstantOfShape <value = float[1] {0}> (s)\n"
                     " y = Cast <to = 1> (c)",
                     "float[2]", 21));
      auto& value = *model.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_t();
      value.clear_float_data();
      value.set_data_type(17);                    // FLOAT8E4M3FN, unknown to ONNX 1.12
      value.set_raw_data(std::string(1, '\x38')); // 1.0
      npucc::check::infer_shapes_strict(model);
      FoldConstants pass;
      CHECK(run(pass, model) == 0);
      check_valid(model);
    }
  }

  TEST_CASE("an opset newer than the one the evaluators were checked against folds nothing") {
    // The reader refuses such a model; the pass must not fold it with older semantics.
    auto model = npucc::test::parse_text_model(
        graph_text("int64[2] a = {2, 3}, int64[1] flat = {-1}",
                   "r = Reshape(a, flat)\n y = Add(r, r)", "int64[2]", 27));
    FoldConstants pass;
    CHECK(run(pass, model) == 0);
    CHECK(model.graph().node_size() == 3);
  }

  TEST_CASE("before opset 7, arithmetic folds only operands of one shape") {
    SUBCASE("legacy broadcasting along an axis stays") {
      // Add-6 with broadcast = 1, axis = 0 adds b down the rows: not numpy broadcasting.
      CHECK_FALSE(fold("int64[3,3] a = {0, 0, 0, 0, 0, 0, 0, 0, 0}, int64[3] b = {1, 2, 3}",
                       "y = Add <broadcast = 1, axis = 0> (a, b)", "int64[3,3]", 6));
    }
    SUBCASE("same shapes mean the same in both") {
      auto y = fold("int64[2] a = {1, 2}, int64[2] b = {10, 20}", "y = Mul(a, b)", "int64[2]", 6);
      REQUIRE(y);
      CHECK(y->ints == Ints{10, 40});
    }
  }

  TEST_CASE("versions that define no negative index or axis leave them alone") {
    SUBCASE("Gather-1 (negative indices count back from 11 on)") {
      CHECK_FALSE(
          fold("int64[3] a = {4, 5, 6}, int64[1] i = {-1}", "y = Gather(a, i)", "int64[1]", 9));
      auto y =
          fold("int64[3] a = {4, 5, 6}, int64[1] i = {-1}", "y = Gather(a, i)", "int64[1]", 11);
      REQUIRE(y);
      CHECK(y->ints == Ints{6});
    }
    SUBCASE("Concat-4 and Slice-10 (negative axes from 11 on)") {
      CHECK_FALSE(fold("int64[1] a = {1}, int64[1] b = {2}", "y = Concat <axis = -1> (a, b)",
                       "int64[2]", 10));
      CHECK_FALSE(fold("int64[3] a = {1, 2, 3}, int64[1] s = {1}, int64[1] e = {3}, "
                       "int64[1] axes = {-1}",
                       "y = Slice(a, s, e, axes)", "int64[2]", 10));
      auto y = fold("int64[3] a = {1, 2, 3}, int64[1] s = {1}, int64[1] e = {3}, "
                    "int64[1] axes = {-1}",
                    "y = Slice(a, s, e, axes)", "int64[2]", 11);
      REQUIRE(y);
      CHECK(y->ints == Ints{2, 3});
    }
    SUBCASE("Unsqueeze-1 (negative axes from 11 on)") {
      auto model = npucc::test::parse_text_model(
          graph_text("int64[2] a = {4, 5}", "y = Unsqueeze <axes = [-1]> (a)", "int64[2,1]", 9));
      FoldConstants pass;
      CHECK(run(pass, model) == 0);
      auto y = fold("int64[2] a = {4, 5}", "y = Unsqueeze <axes = [-1]> (a)", "int64[2,1]", 11);
      REQUIRE(y);
      CHECK(y->dims == Ints{2, 1});
    }
  }

  TEST_CASE("Split") {
    // Two outputs: the first read as y, the second through z2 (graph outputs stay nodes).
    auto split = [](const std::string& inits, const std::string& node, const std::string& out,
                    int opset) {
      auto model = npucc::test::typed_model(
          "<ir_version: " + std::to_string(npucc::test::ir_version_for(opset)) +
          ", opset_import: [\"\" : " + std::to_string(opset) + "]>\nagraph (float[1] unused) => (" +
          out + " z, " + out + " z2) <" + inits + "> {\n y, y2 = " + node +
          "\n z = Identity(y)\n z2 = Identity(y2)\n}\n");
      FoldConstants pass;
      int64_t changed = run(pass, model);
      check_valid(model);
      std::vector<std::optional<FoldValue>> parts = {initializer_value(model.graph(), "y"),
                                                     initializer_value(model.graph(), "y2")};
      CHECK((changed > 0) == parts[0].has_value());
      return parts;
    };
    SUBCASE("num_outputs (opset 18)") {
      auto parts =
          split("int64[4] a = {1, 2, 3, 4}", "Split <num_outputs = 2> (a)", "int64[2]", 18);
      REQUIRE(parts[0]);
      REQUIRE(parts[1]);
      CHECK(parts[0]->ints == Ints{1, 2});
      CHECK(parts[1]->ints == Ints{3, 4});
    }
    SUBCASE("num_outputs not dividing: the last part smaller") {
      auto model = npucc::test::typed_model(R"(
        <ir_version: 8, opset_import: ["" : 18]>
        agraph (float[1] unused) => (int64[2] z, int64[1] z2) <int64[3] a = {7, 8, 9}> {
          y, y2 = Split <num_outputs = 2> (a)
          z = Identity(y)
          z2 = Identity(y2)
        }
      )");
      FoldConstants pass;
      CHECK(run(pass, model) == 1);
      auto last = initializer_value(model.graph(), "y2");
      REQUIRE(last);
      CHECK(last->ints == Ints{9});
    }
    SUBCASE("split sizes as an input (13), on an inner axis") {
      auto parts = split("float[2,4] a = {1, 2, 3, 4, 5, 6, 7, 8}, int64[2] s = {2, 2}",
                         "Split <axis = -1> (a, s)", "float[2,2]", 13);
      REQUIRE(parts[1]);
      CHECK(parts[1]->floats == Floats{3, 4, 7, 8});
    }
    SUBCASE("split sizes as an attribute (11), equal parts (2)") {
      auto parts = split("int64[4] a = {1, 2, 3, 4}", "Split <split = [3, 1]> (a)", "int64[?]", 11);
      REQUIRE(parts[0]);
      CHECK(parts[0]->ints == Ints{1, 2, 3});
      CHECK(parts[1]->ints == Ints{4});
      parts = split("int64[4] a = {1, 2, 3, 4}", "Split(a)", "int64[2]", 2);
      REQUIRE(parts[1]);
      CHECK(parts[1]->ints == Ints{3, 4});
    }
    SUBCASE("what Split does not define stays") {
      auto model = npucc::test::parse_text_model(R"(
        <ir_version: 8, opset_import: ["" : 18]>
        agraph (float[1] unused) => (int64[2] z, int64[2] z2, int64[2] z3)
                                    <int64[4] a = {1, 2, 3, 4}, int64[2] s = {2, 2}> {
          y, y2 = Split <num_outputs = 2> (a, s)
          w1, w2, w3 = Split <num_outputs = 3> (a)
          v1, v2 = Split(a, s)
          z = Identity(y)
          z2 = Identity(w3)
          z3 = Concat <axis = 0> (v1, v2)
        }
      )");
      FoldConstants pass;
      // num_outputs with sizes too; 4 in 3 parts of 2 leaves nothing for the last; only
      // the well-defined third folds.
      CHECK(run(pass, model) == 1);
      CHECK(npucc::test::count_ops(model.graph(), "Split") == 2);
    }
  }

  TEST_CASE("Reduce* with axes as an input or an attribute") {
    SUBCASE("ReduceProd-18 of a shape, axes an input") {
      auto y = fold("int64[3] s = {2, 3, 4}, int64[1] axes = {0}",
                    "y = ReduceProd <keepdims = 1> (s, axes)", "int64[1]", 18);
      REQUIRE(y);
      CHECK(y->ints == Ints{24});
    }
    SUBCASE("ReduceSum-13 over an inner axis, keepdims 0") {
      auto y = fold("int64[2,3] a = {1, 2, 3, 4, 5, 6}, int64[1] axes = {-1}",
                    "y = ReduceSum <keepdims = 0> (a, axes)", "int64[2]", 13);
      REQUIRE(y);
      CHECK(y->ints == Ints{6, 15});
    }
    SUBCASE("axes omitted: every axis, or none with noop_with_empty_axes") {
      auto all = fold("int32[2,2] a = {1, 5, -3, 2}", "y = ReduceMax(a)", "int32[1,1]", 18);
      REQUIRE(all);
      CHECK(all->dims == Ints{1, 1});
      CHECK(all->ints == Ints{5});
      auto none = fold("int32[2,2] a = {1, 5, -3, 2}, int64[0] axes = {}",
                       "y = ReduceMin <noop_with_empty_axes = 1> (a, axes)", "int32[2,2]", 18);
      REQUIRE(none);
      CHECK(none->ints == Ints{1, 5, -3, 2});
    }
    SUBCASE("axes an attribute before opset 18 (13 for ReduceSum)") {
      auto y = fold("int64[2,2] a = {1, 5, -3, 2}", "y = ReduceMin <axes = [0], keepdims = 0> (a)",
                    "int64[2]", 17);
      REQUIRE(y);
      CHECK(y->ints == Ints{-3, 2});
      y = fold("int64[2,2] a = {1, 5, -3, 2}", "y = ReduceSum <axes = [1], keepdims = 0> (a)",
               "int64[2]", 11);
      REQUIRE(y);
      CHECK(y->ints == Ints{6, -1});
    }
    SUBCASE("float max and bool max (20)") {
      auto f = fold("float[3] a = {0.5, -2, 1.5}, int64[1] axes = {0}",
                    "y = ReduceMax <keepdims = 0> (a, axes)", "float", 18);
      REQUIRE(f);
      CHECK(f->floats == Floats{1.5F});
      auto b = fold("bool[3] a = {0, 1, 0}, int64[1] axes = {0}",
                    "y = ReduceMax <keepdims = 0> (a, axes)", "bool", 20);
      REQUIRE(b);
      CHECK(b->ints == Ints{1});
    }
    SUBCASE("a sum or product over an empty axis") {
      auto y = fold("int64[2,0] a = {}, int64[1] axes = {1}",
                    "y = ReduceProd <keepdims = 0> (a, axes)", "int64[2]", 18);
      REQUIRE(y);
      CHECK(y->ints == Ints{1, 1});
    }
    SUBCASE("what is not exact or not defined stays") {
      // Float sums round in the runtime's order; overflow; NaN; a max over nothing.
      CHECK_FALSE(fold("float[3] a = {0.1, 0.2, 0.3}, int64[1] axes = {0}",
                       "y = ReduceSum <keepdims = 0> (a, axes)", "float", 18));
      CHECK_FALSE(fold("int32[2] a = {65536, 65536}, int64[1] axes = {0}",
                       "y = ReduceProd <keepdims = 0> (a, axes)", "int32", 18));
      auto with_nan = npucc::test::parse_text_model(
          graph_text("float[2] a = {1, 2}, int64[1] axes = {0}",
                     "y = ReduceMax <keepdims = 0> (a, axes)", "float", 18));
      with_nan.mutable_graph()->mutable_initializer(0)->set_float_data(1, std::nanf(""));
      npucc::check::infer_shapes_strict(with_nan);
      FoldConstants pass;
      CHECK(run(pass, with_nan) == 0);
      CHECK_FALSE(fold("float[2] a = {-0.0, 0.0}, int64[1] axes = {0}",
                       "y = ReduceMax <keepdims = 0> (a, axes)", "float", 18));
      CHECK_FALSE(fold("int64[0] a = {}, int64[1] axes = {0}",
                       "y = ReduceMax <keepdims = 0> (a, axes)", "int64", 18));
      CHECK_FALSE(fold("int64[2] a = {1, 2}, int64[1] axes = {0}",
                       "y = ReduceMean <keepdims = 0> (a, axes)", "int64", 18));
    }
  }

  TEST_CASE("CastLike: a constant cast to the type of any value") {
    for (int opset : {15, 19, 21, 23, 25}) {
      CAPTURE(opset);
      // like is a graph input: only its type is known, and that is all CastLike reads.
      auto model = npucc::test::typed_model(
          "<ir_version: " + std::to_string(npucc::test::ir_version_for(opset)) +
          ", opset_import: [\"\" : " + std::to_string(opset) + R"(]>
        agraph (int32[2] like, float16[2] half) => (int32[2] z, float16[2] w)
                                                   <float[2] a = {1.9, -2.5}> {
          y = CastLike(a, like)
          z = Mul(y, like)
          h = CastLike(a, half)
          w = Mul(h, half)
        }
      )");
      FoldConstants pass;
      CHECK(run(pass, model) == 1); // float16 is not a type folding computes
      check_valid(model);
      auto y = initializer_value(model.graph(), "y");
      REQUIRE(y);
      CHECK(y->type == T::INT32);
      CHECK(y->ints == Ints{1, -2});
      CHECK(npucc::test::count_ops(model.graph(), "CastLike") == 1);
    }
  }

  TEST_CASE("Pad") {
    const std::string data = "float[3,2] a = {1.0, 1.2, 2.3, 3.4, 4.5, 5.7}";
    SUBCASE("wrap (19): the Changelog's example") {
      auto y = fold(data + ", int64[4] p = {2, 1, 1, 1}", "y = Pad <mode = \"wrap\"> (a, p)",
                    "float[6,4]", 19);
      REQUIRE(y);
      CHECK(y->floats == Floats{3.4F, 2.3F, 3.4F, 2.3F, 5.7F, 4.5F, 5.7F, 4.5F,
                                1.2F, 1.0F, 1.2F, 1.0F, 3.4F, 2.3F, 3.4F, 2.3F,
                                5.7F, 4.5F, 5.7F, 4.5F, 1.2F, 1.0F, 1.2F, 1.0F});
    }
    SUBCASE("reflect and edge on the second axis") {
      auto r = fold(data + ", int64[4] p = {0, 1, 0, 0}", "y = Pad <mode = \"reflect\"> (a, p)",
                    "float[3,3]", 13);
      REQUIRE(r);
      CHECK(r->floats == Floats{1.2F, 1.0F, 1.2F, 3.4F, 2.3F, 3.4F, 5.7F, 4.5F, 5.7F});
      auto e = fold(data + ", int64[4] p = {0, 2, 0, 0}", "y = Pad <mode = \"edge\"> (a, p)",
                    "float[3,4]", 11);
      REQUIRE(e);
      CHECK(e->floats ==
            Floats{1.0F, 1.0F, 1.0F, 1.2F, 2.3F, 2.3F, 2.3F, 3.4F, 4.5F, 4.5F, 4.5F, 5.7F});
    }
    SUBCASE("axes (18), a constant value, and cropping") {
      auto y = fold("int64[2,3] a = {1, 2, 3, 4, 5, 6}, int64[2] p = {1, -1}, int64 v = {9}, "
                    "int64[1] axes = {-1}",
                    "y = Pad(a, p, v, axes)", "int64[2,3]", 18);
      REQUIRE(y);
      CHECK(y->ints == Ints{9, 1, 2, 9, 4, 5});
    }
    SUBCASE("what Pad does not define stays") {
      // wrap before 19; reflect as long as the dim; cropping with edge; a repeated axis.
      CHECK_FALSE(fold(data + ", int64[4] p = {0, 1, 0, 0}", "y = Pad <mode = \"wrap\"> (a, p)",
                       "float[3,3]", 18));
      // (the Changelog's reflect example pads a dim of 2 by 2: reflected twice, which
      // runtimes need not do)
      CHECK_FALSE(fold(data + ", int64[4] p = {0, 2, 0, 0}", "y = Pad <mode = \"reflect\"> (a, p)",
                       "float[3,4]", 19));
      CHECK_FALSE(fold(data + ", int64[4] p = {0, 0, 0, -1}", "y = Pad <mode = \"edge\"> (a, p)",
                       "float[3,1]", 19));
      CHECK_FALSE(fold(data + ", int64[4] p = {0, 1, 0, 1}, int64[2] axes = {1, -1}",
                       "y = Pad(a, p, , axes)", "float[3,4]", 19));
    }
  }
}
