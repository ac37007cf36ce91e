#include "check/validate.h"
#include "passes/eliminate_dead_code.h"
#include "passes/fold_cast_chains.h"
#include "test_passes_support.h"

using npucc::passes::cast_is_exact;
using npucc::passes::EliminateDeadCode;
using npucc::passes::FoldCastChains;
using npucc::test::check_valid;
using npucc::test::count_ops;
using npucc::test::inputs_of;
using npucc::test::run;
using Names = std::vector<std::string>;
using T = onnx::TensorProto;

namespace {

// Shape inference first: the pass reads element types from value_info.
onnx::ModelProto typed_model(const std::string& text) {
  auto model = npucc::test::parse_text_model(text);
  npucc::check::infer_shapes_strict(model);
  return model;
}

// Folds, then removes the casts the folding left unread; the number of Casts left.
int casts_after_folding(onnx::ModelProto& model, int64_t expected_changes) {
  FoldCastChains fold;
  EliminateDeadCode dead_code;
  CHECK(run(fold, model) == expected_changes);
  run(dead_code, model);
  check_valid(model);
  CHECK(run(fold, model) == 0);
  return count_ops(model.graph(), "Cast") + count_ops(model.graph(), "CastLike");
}

std::string chain(const std::string& source, int middle, int target, const std::string& result) {
  return R"(
    <ir_version: 8, opset_import: ["" : 17]>
    agraph ()" +
         source + R"([2] x) => ()" + result + R"([2] z) {
      y = Cast <to = )" +
         std::to_string(middle) + R"(> (x)
      c = Cast <to = )" +
         std::to_string(target) + R"(> (y)
      z = Identity(c)
    }
  )";
}

} // namespace

TEST_SUITE("npucc::passes::FoldCastChains") {
  TEST_CASE("knows which conversions are exact") {
    CHECK(cast_is_exact(T::FLOAT16, T::FLOAT));
    CHECK(cast_is_exact(T::BFLOAT16, T::FLOAT));
    CHECK(cast_is_exact(T::FLOAT, T::DOUBLE));
    CHECK(cast_is_exact(T::INT32, T::INT64));
    CHECK(cast_is_exact(T::INT32, T::DOUBLE));
    CHECK(cast_is_exact(T::UINT8, T::FLOAT16));
    CHECK(cast_is_exact(T::UINT8, T::BFLOAT16));
    CHECK(cast_is_exact(T::INT16, T::FLOAT));
    CHECK(cast_is_exact(T::UINT32, T::INT64));
    CHECK(cast_is_exact(T::BOOL, T::FLOAT16));
    CHECK(cast_is_exact(T::BOOL, T::INT8));

    CHECK_FALSE(cast_is_exact(T::FLOAT, T::FLOAT16));
    CHECK_FALSE(cast_is_exact(T::FLOAT16, T::BFLOAT16));
    CHECK_FALSE(cast_is_exact(T::BFLOAT16, T::FLOAT16));
    CHECK_FALSE(cast_is_exact(T::INT32, T::FLOAT));
    CHECK_FALSE(cast_is_exact(T::INT64, T::DOUBLE));
    CHECK_FALSE(cast_is_exact(T::INT64, T::INT32));
    CHECK_FALSE(cast_is_exact(T::INT8, T::UINT16));
    CHECK_FALSE(cast_is_exact(T::UINT16, T::FLOAT16));
    CHECK_FALSE(cast_is_exact(T::INT16, T::FLOAT16));
    CHECK_FALSE(cast_is_exact(T::UINT64, T::INT64));
    CHECK_FALSE(cast_is_exact(T::FLOAT, T::INT64));
    CHECK_FALSE(cast_is_exact(T::INT32, T::BOOL));
    CHECK_FALSE(cast_is_exact(T::FLOAT, T::BOOL));
    CHECK_FALSE(cast_is_exact(T::INT32, T::STRING));
    CHECK_FALSE(cast_is_exact(T::FLOAT, T::COMPLEX64));
  }

  TEST_CASE("removes a Cast to the type its input already has") {
    auto model = typed_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[2] x) => (float[2] z) {
        y = Cast <to = 1> (x)
        z = Neg(y)
      }
    )");
    CHECK(casts_after_folding(model, 1) == 0);
    CHECK(inputs_of(model.graph().node(0)) == Names{"x"});
  }

  TEST_CASE("a round trip through an exact type disappears") {
    SUBCASE("float16 -> float32 -> float16") {
      auto model = typed_model(chain("float16", T::FLOAT, T::FLOAT16, "float16"));
      CHECK(casts_after_folding(model, 2) == 0);
      CHECK(inputs_of(model.graph().node(0)) == Names{"x"});
    }
    SUBCASE("bfloat16 -> float32 -> bfloat16") {
      auto model = typed_model(chain("bfloat16", T::FLOAT, T::BFLOAT16, "bfloat16"));
      CHECK(casts_after_folding(model, 2) == 0);
    }
    SUBCASE("int32 -> int64 -> int32") {
      auto model = typed_model(chain("int32", T::INT64, T::INT32, "int32"));
      CHECK(casts_after_folding(model, 2) == 0);
    }
    SUBCASE("bool -> float -> bool") {
      auto model = typed_model(chain("bool", T::FLOAT, T::BOOL, "bool"));
      CHECK(casts_after_folding(model, 2) == 0);
    }
    SUBCASE("uint8 -> int32 -> uint8") {
      auto model = typed_model(chain("uint8", T::INT32, T::UINT8, "uint8"));
      CHECK(casts_after_folding(model, 2) == 0);
    }
  }

  TEST_CASE("an exact first step folds into one Cast to the final type") {
    SUBCASE("int32 -> int64 -> float") {
      auto model = typed_model(chain("int32", T::INT64, T::FLOAT, "float"));
      CHECK(casts_after_folding(model, 1) == 1);
      const auto* cast = npucc::test::find_op(model.graph(), "Cast");
      REQUIRE(cast != nullptr);
      CHECK(inputs_of(*cast) == Names{"x"});
      CHECK(cast->attribute(0).i() == T::FLOAT);
    }
    SUBCASE("float16 -> float -> double") {
      auto model = typed_model(chain("float16", T::FLOAT, T::DOUBLE, "double"));
      CHECK(casts_after_folding(model, 1) == 1);
    }
  }

  TEST_CASE("never folds a lossy chain") {
    SUBCASE("float32 -> float16 -> float32 rounds on purpose") {
      auto model = typed_model(chain("float", T::FLOAT16, T::FLOAT, "float"));
      CHECK(casts_after_folding(model, 0) == 2);
    }
    SUBCASE("float -> int32 -> int64 truncates and may overflow") {
      auto model = typed_model(chain("float", T::INT32, T::INT64, "int64"));
      CHECK(casts_after_folding(model, 0) == 2);
    }
    SUBCASE("int64 -> int32 -> int64 wraps") {
      auto model = typed_model(chain("int64", T::INT32, T::INT64, "int64"));
      CHECK(casts_after_folding(model, 0) == 2);
    }
    SUBCASE("float -> bool -> float") {
      auto model = typed_model(chain("float", T::BOOL, T::FLOAT, "float"));
      CHECK(casts_after_folding(model, 0) == 2);
    }
    SUBCASE("int32 -> float -> int32") {
      auto model = typed_model(chain("int32", T::FLOAT, T::INT32, "int32"));
      CHECK(casts_after_folding(model, 0) == 2);
    }
    SUBCASE("int32 -> int64 -> string prints per type") {
      auto model = typed_model(chain("int32", T::INT64, T::STRING, "string"));
      CHECK(casts_after_folding(model, 0) == 2);
    }
  }

  TEST_CASE("a chain whose middle value has other readers keeps its first Cast") {
    auto model = typed_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float16[2] x) => (float16[2] z, float[2] y) {
        y = Cast <to = 1> (x)
        z = Cast <to = 10> (y)
      }
    )");
    FoldCastChains fold;
    CHECK(run(fold, model) == 1);
    // z cannot disappear (it is a graph output fed by the graph input): it reads x.
    REQUIRE(model.graph().node_size() == 2);
    CHECK(inputs_of(model.graph().node(1)) == Names{"x"});
    check_valid(model);
    CHECK(run(fold, model) == 0);
  }

  TEST_CASE("a no-op Cast that is a graph output renames its producer") {
    auto model = typed_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[2] x) => (float[2] z) {
        a = Neg(x)
        z = Cast <to = 1> (a)
      }
    )");
    CHECK(casts_after_folding(model, 1) == 0);
    REQUIRE(model.graph().node_size() == 1);
    CHECK(model.graph().node(0).output(0) == "z");
  }

  TEST_CASE("CastLike to the type its input has is removed") {
    auto model = typed_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[2] x, float[1] like, float16[1] half) => (float[2] z, float16[2] h) {
        y = CastLike(x, like)
        z = Neg(y)
        h = CastLike(x, half)
      }
    )");
    CHECK(casts_after_folding(model, 1) == 1);
    CHECK(inputs_of(*npucc::test::find_op(model.graph(), "Neg")) == Names{"x"});
  }

  TEST_CASE("folds chains inside If bodies reading outer values") {
    auto model = typed_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (bool cond, float16[2] x) => (float16[2] z) {
        wide = Cast <to = 1> (x)
        z = If(cond) <
          then_branch = g1 () => (float16[2] t) {
            n = Cast <to = 10> (wide)
            t = Neg(n)
          },
          else_branch = g2 () => (float16[2] e) { e = Abs(x) }>
      }
    )");
    FoldCastChains fold;
    // Chains are folded within one graph: this one spans two scopes and stays.
    CHECK(run(fold, model) == 0);

    auto inner = typed_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (bool cond, float16[2] x) => (float16[2] z) {
        z = If(cond) <
          then_branch = g1 () => (float16[2] t) {
            wide = Cast <to = 1> (x)
            n = Cast <to = 10> (wide)
            t = Neg(n)
          },
          else_branch = g2 () => (float16[2] e) { e = Abs(x) }>
      }
    )");
    CHECK(casts_after_folding(inner, 2) == 0);
    const auto& then_branch = inner.graph().node(0).attribute(0).g();
    REQUIRE(then_branch.node_size() == 1);
    CHECK(inputs_of(then_branch.node(0)) == Names{"x"});
  }

  TEST_CASE("opsets 19 to 26: chains of the new Cast and CastLike versions") {
    SUBCASE("an exact first step is skipped, saturate or not") {
      for (int opset : {19, 21, 23, 25}) {
        CAPTURE(opset);
        auto model =
            typed_model("<ir_version: " + std::to_string(npucc::test::ir_version_for(opset)) +
                        ", opset_import: [\"\" : " + std::to_string(opset) + R"(]>
          agraph (float16[2] x, float[2] like) => (float16[2] z) {
            y = Cast <to = 1, saturate = 1> (x)
            c = CastLike <saturate = 1> (y, like)
            d = Cast <to = 10> (c)
            z = Identity(d)
          }
        )");
        // d reads x directly, c (float to float) goes, y is then unread.
        CHECK(casts_after_folding(model, 3) == 0);
      }
    }
    SUBCASE("a step through float8 or int4 is never skipped") {
      for (int middle : {17, 18, 19, 20, 21, 22, 23, 24}) {
        CAPTURE(middle);
        auto model = npucc::test::parse_text_model(R"(
          <ir_version: 11, opset_import: ["" : 23]>
          agraph (float[2] x) => (float[2] z) {
            y = Cast <to = )" + std::to_string(middle) +
                                                   R"(, saturate = 0> (x)
            c = Cast <to = 1> (y)
            z = Identity(c)
          }
        )");
        // Inference does not know float8 in ONNX 1.12's Cast; give y its type by hand.
        auto* info = model.mutable_graph()->add_value_info();
        info->set_name("y");
        info->mutable_type()->mutable_tensor_type()->set_elem_type(middle);
        FoldCastChains fold;
        CHECK(run(fold, model) == 0);
        CHECK(inputs_of(model.graph().node(1)) == Names{"y"});
      }
    }
  }
}
