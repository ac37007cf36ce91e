#include "model/weight_store.h"
#include "npucc/model.h"
#include "passes/deduplicate_initializers.h"
#include "test_passes_support.h"
#include "util/file_io.h"

#include <cstring>

using npucc::passes::DeduplicateInitializers;
using npucc::test::check_valid;
using npucc::test::has_initializer;
using npucc::test::inputs_of;
using npucc::test::run;
using Names = std::vector<std::string>;

TEST_SUITE("npucc::passes::DeduplicateInitializers") {
  TEST_CASE("merges identical tensors into the first and renames their readers") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[2] x, int32[2] i) => (float[2] y, float[2] z, int32[2] j, float[1,2] m)
        <float[2] a = {1, 2}, float[2] b = {1, 2}, float[2] c = {1, 2},
         float[2] other = {2, 1}, float[1,2] shaped = {1, 2}, int32[2] ints = {1, 2}> {
        s = Add(x, a)
        y = Mul(s, b)
        z = Sub(c, other)
        j = Add(i, ints)
        m = Add(x, shaped)
      }
    )");
    auto* info = model.mutable_graph()->add_value_info();
    *info = model.graph().input(0);
    info->set_name("b");
    DeduplicateInitializers pass;
    CHECK(run(pass, model) == 2);
    CHECK_FALSE(npucc::test::has_value_info(model.graph(), "b"));
    const auto& graph = model.graph();
    CHECK(graph.initializer_size() == 4);
    CHECK(has_initializer(graph, "a"));
    CHECK_FALSE(has_initializer(graph, "b"));
    CHECK_FALSE(has_initializer(graph, "c"));
    // Same values but another type or shape: not the same tensor.
    CHECK(has_initializer(graph, "shaped"));
    CHECK(has_initializer(graph, "ints"));
    CHECK(inputs_of(graph.node(1)) == Names{"s", "a"});
    CHECK(inputs_of(graph.node(2)) == Names{"a", "other"});
    check_valid(model);
    CHECK(run(pass, model) == 0);
  }

  TEST_CASE("compares bytes, not values") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[1] x) => (float[1] y) <float[1] pos = {0.0}, float[1] neg = {-0.0}> {
        s = Add(x, pos)
        y = Add(s, neg)
      }
    )");
    DeduplicateInitializers pass;
    CHECK(run(pass, model) == 0);

    SUBCASE("raw data") {
      auto* graph = model.mutable_graph();
      for (int i = 0; i < 2; ++i) {
        auto* tensor = graph->mutable_initializer(i);
        tensor->clear_float_data();
        tensor->set_raw_data(std::string("\0\0\x80\x3f", 4));
      }
      CHECK(run(pass, model) == 1);
      CHECK(graph->initializer_size() == 1);
      check_valid(model);
    }
  }

  TEST_CASE("leaves initializers that are graph inputs or outputs alone") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[2] x, float[2] overridable) => (float[2] y, float[2] out)
        <float[2] a = {1, 2}, float[2] overridable = {1, 2}, float[2] out = {1, 2}> {
        s = Add(x, a)
        y = Mul(s, overridable)
      }
    )");
    DeduplicateInitializers pass;
    CHECK(run(pass, model) == 0);
    CHECK(model.graph().initializer_size() == 3);
    check_valid(model);
  }

  TEST_CASE("renames reads of a duplicate inside If bodies") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (bool cond, float[2] x) => (float[2] y) <float[2] a = {3, 4}, float[2] b = {3, 4}> {
        s = Add(x, a)
        y = If(cond) <
          then_branch = g1 () => (float[2] t) { t = Mul(s, b) },
          else_branch = g2 () => (float[2] e) { e = Sub(s, b) }>
      }
    )");
    DeduplicateInitializers pass;
    CHECK(run(pass, model) == 1);
    const auto& if_node = model.graph().node(1);
    CHECK(inputs_of(if_node.attribute(0).g().node(0)) == Names{"s", "a"});
    CHECK(inputs_of(if_node.attribute(1).g().node(0)) == Names{"s", "a"});
    check_valid(model);
    CHECK(run(pass, model) == 0);
  }

  TEST_CASE("does not merge into a name a body defines for itself") {
    // Inside the Loop body "a" is the body's own input: a read of b there cannot
    // become a read of a.
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (int64 n, bool cond, float[2] x) => (float[2] out)
        <float[2] a = {3, 4}, float[2] b = {3, 4}> {
        s = Add(x, a)
        out = Loop(n, cond, s) <body = g (int64 i, bool c, float[2] a) => (bool c2, float[2] r) {
          c2 = Not(c)
          r = Add(a, b)
        }>
      }
    )");
    DeduplicateInitializers pass;
    CHECK(run(pass, model) == 0);
  }

  TEST_CASE("is fast on many large initializers") {
    onnx::ModelProto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[4096] x) => (float[4096] y) {
        y = Identity(x)
      }
    )");
    auto* graph = model.mutable_graph();
    constexpr int k_tensors = 2000;
    for (int i = 0; i < k_tensors; ++i) {
      auto* tensor = graph->add_initializer();
      tensor->set_name("w" + std::to_string(i));
      tensor->set_data_type(onnx::TensorProto::FLOAT);
      tensor->add_dims(4096);
      std::string bytes(4096 * 4, '\0');
      // Pairs of equal tensors: 1000 distinct contents, differing only at the end.
      int value = i / 2;
      std::memcpy(&bytes[bytes.size() - sizeof(value)], &value, sizeof(value));
      tensor->set_raw_data(bytes);
      auto* node = graph->add_node();
      node->set_op_type("Add");
      node->add_input("x");
      node->add_input(tensor->name());
      node->add_output("o" + std::to_string(i));
    }
    DeduplicateInitializers pass;
    CHECK(run(pass, model) == k_tensors / 2);
    CHECK(graph->node(3).input(1) == "w2");
  }

  TEST_CASE("IR 10: float8 and int4 tensors, and tensors with metadata_props") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 10, opset_import: ["" : 21]>
      agraph (float[2] x) => (float[2] y1, float[2] y2, float[2] y3, float[2] y4, float[2] y5,
                              float[2] y6)
        <uint8[2] f1 = {0, 0}, uint8[2] f2 = {0, 0}, uint8[2] u = {0, 0},
         uint8[2] q1 = {0, 0}, uint8[2] m1 = {0, 0}, uint8[2] m2 = {0, 0}> {
        y1 = DequantizeLinear(f1, x)
        y2 = DequantizeLinear(f2, x)
        y3 = DequantizeLinear(u, x)
        y4 = DequantizeLinear(q1, x)
        y5 = DequantizeLinear(m1, x)
        y6 = DequantizeLinear(m2, x)
      }
    )");
    // f1, f2: float8e4m3fn with the same bytes; u: uint8 with those bytes; q1: int4 with
    // them; m1, m2: float8e4m3fn with those bytes but metadata_props (field 16, unknown to
    // ONNX 1.12) that differ.
    auto& graph = *model.mutable_graph();
    const int32_t types[] = {17, 17, 2, 22, 17, 17};
    for (int i = 0; i < graph.initializer_size(); ++i) {
      auto& tensor = *graph.mutable_initializer(i);
      tensor.clear_int32_data();
      tensor.set_data_type(types[i]);
      tensor.set_raw_data(std::string("\x38\x40", 2));
    }
    auto add_metadata = [](onnx::TensorProto& tensor, const std::string& entry) {
      tensor.GetReflection()->MutableUnknownFields(&tensor)->AddLengthDelimited(16, entry);
    };
    add_metadata(*graph.mutable_initializer(4), "\x0a\x01k\x12\x01a");
    add_metadata(*graph.mutable_initializer(5), "\x0a\x01k\x12\x01b");
    DeduplicateInitializers pass;
    CHECK(run(pass, model) == 1);
    CHECK(has_initializer(model.graph(), "f1"));
    CHECK_FALSE(has_initializer(model.graph(), "f2"));
    CHECK(inputs_of(model.graph().node(1)) == Names{"f1", "x"});
    for (const char* kept : {"u", "q1", "m1", "m2"}) {
      CAPTURE(kept);
      CHECK(has_initializer(model.graph(), kept));
    }
    // q1 made a float8 tensor with m2's metadata: the two merge into the first, q1.
    for (auto& tensor : *model.mutable_graph()->mutable_initializer()) {
      if (tensor.name() == "q1") {
        tensor.set_data_type(17);
        add_metadata(tensor, "\x0a\x01k\x12\x01b");
      }
    }
    CHECK(run(pass, model) == 1);
    CHECK(model.graph().initializer_size() == 4);
    CHECK_FALSE(has_initializer(model.graph(), "m2"));
    CHECK(inputs_of(model.graph().node(5)) == Names{"q1", "x"});
  }
}

TEST_SUITE("npucc::passes::DeduplicateInitializers of mapped weights") {
  // Weights read from a single-file model are slices of the mapped file; their sampled
  // windows are read with pread, and must hash as the same bytes in memory do.
  TEST_CASE("identical mapped weights merge; a weight equal to one in memory too") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      agraph (float[16384] x) => (float[16384] y, float[16384] z) {
        s = Add(x, a)
        y = Mul(s, b)
        z = Sub(x, c)
      }
    )");
    std::string bytes(16384 * sizeof(float), '\0');
    for (size_t i = 0; i < bytes.size(); ++i) {
      bytes[i] = static_cast<char>(i * 7 + 3);
    }
    std::string other = bytes;
    other[bytes.size() / 2] ^= 1; // differs in the middle window only
    for (const auto& [name, data] : {std::pair{"a", bytes}, {"b", bytes}, {"c", other}}) {
      auto* tensor = model.mutable_graph()->add_initializer();
      tensor->set_name(name);
      tensor->set_data_type(onnx::TensorProto::FLOAT);
      tensor->add_dims(16384);
      tensor->set_raw_data(data);
    }
    auto path = npucc::test::temp_dir("dedupe") / "m.onnx";
    npucc::util::write_file_atomic(path, model.SerializeAsString());
    npucc::Model mapped = npucc::read_model(path, {}, npucc::Weights::in_table);
    REQUIRE(npucc::model::mapped_slice(mapped.proto.graph().initializer(0)));
    DeduplicateInitializers pass;
    CHECK(run(pass, mapped.proto) == 1);
    CHECK(has_initializer(mapped.proto.graph(), "a"));
    CHECK_FALSE(has_initializer(mapped.proto.graph(), "b"));
    CHECK(has_initializer(mapped.proto.graph(), "c"));
  }
}
