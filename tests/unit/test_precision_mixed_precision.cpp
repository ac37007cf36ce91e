#include "check/validate.h"
#include "model/graph_walk.h"
#include "npucc/error.h"
#include "precision/mixed_precision.h"
#include "test_support.h"

#include <doctest/doctest.h>
#include <functional>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

using npucc::LowPrecision;
using npucc::precision::KeepIoTypes;
using npucc::precision::Policy;
using npucc::precision::RewriteOptions;
using npucc::precision::RewriteReport;
using npucc::precision::WeightStorage;
using onnx::TensorProto;

namespace {

RewriteOptions options_for(LowPrecision low) {
  RewriteOptions options;
  options.low = low;
  options.lists = npucc::precision::default_op_lists(low);
  return options;
}

// The text parser makes every initializer a graph input too; real weights are not.
void drop_initializer_inputs(onnx::ModelProto& model) {
  std::unordered_set<std::string> inits;
  for (const auto& init : model.graph().initializer()) {
    inits.insert(init.name());
  }
  auto* inputs = model.mutable_graph()->mutable_input();
  for (int i = inputs->size() - 1; i >= 0; --i) {
    if (inits.count(inputs->Get(i).name()) != 0) {
      inputs->DeleteSubrange(i, 1);
    }
  }
}

// Strict typed inference without the compiler's retry: the rewrite's own value_info
// must agree with what ONNX infers.
void check_valid(onnx::ModelProto& model) {
  onnx::checker::check_model(model);
  onnx::ShapeInferenceOptions options(true, 1, false);
  onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
}

struct Lowered {
  onnx::ModelProto model;
  RewriteReport report;
};

Lowered lower(const std::string& text, const RewriteOptions& options) {
  Lowered out{npucc::test::parse_text_model(text), {}};
  drop_initializer_inputs(out.model);
  npucc::check::infer_shapes_strict(out.model);
  out.report = npucc::precision::rewrite_mixed_precision(out.model, options);
  INFO(out.model.DebugString());
  CHECK_NOTHROW(check_valid(out.model));
  return out;
}

Lowered lower(const std::string& text, LowPrecision low = LowPrecision::float16) {
  return lower(text, options_for(low));
}

// The element type of a value anywhere in the model (0 when undeclared).
int32_t type_of(const onnx::ModelProto& model, const std::string& name) {
  int32_t found = 0;
  npucc::model::for_each_graph(model.graph(), [&](const onnx::GraphProto& graph, int) {
    for (const auto* list : {&graph.input(), &graph.output(), &graph.value_info()}) {
      for (const auto& value : *list) {
        if (value.name() == name) {
          found = value.type().tensor_type().elem_type();
        }
      }
    }
    for (const auto& init : graph.initializer()) {
      if (init.name() == name) {
        found = init.data_type();
      }
    }
    for (const auto& node : graph.node()) {
      if (node.op_type() == "Constant" && node.output(0) == name && node.attribute(0).has_t()) {
        found = node.attribute(0).t().data_type();
      }
    }
  });
  return found;
}

int count_op(const onnx::ModelProto& model, const std::string& op_type) {
  int count = 0;
  npucc::model::for_each_graph(model.graph(), [&](const onnx::GraphProto& graph, int) {
    for (const auto& node : graph.node()) {
      count += node.op_type() == op_type ? 1 : 0;
    }
  });
  return count;
}

const onnx::NodeProto* producer_of(const onnx::GraphProto& graph, const std::string& name) {
  for (const auto& node : graph.node()) {
    for (const auto& output : node.output()) {
      if (output == name) {
        return &node;
      }
    }
  }
  return nullptr;
}

constexpr int32_t f32 = TensorProto::FLOAT;
constexpr int32_t f16 = TensorProto::FLOAT16;
constexpr int32_t bf16 = TensorProto::BFLOAT16;

} // namespace

TEST_SUITE("npucc::precision::rewrite_mixed_precision") {
  TEST_CASE("paints allow ops low, infer/clear ops follow, deny ops stay float32") {
    auto out = lower(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2,4] x, float[4,4] w) => (float[2,4] y) {
        m = MatMul(x, w)
        r = Relu(m)
        e = Exp(r)
        a = Add(e, r)
        y = Identity(a)
      }
    )");
    CHECK(type_of(out.model, "m") == f16);
    CHECK(type_of(out.model, "r") == f16);
    CHECK(type_of(out.model, "e") == f32);
    CHECK(type_of(out.model, "a") == f32); // deny spread through the infer op Add
    CHECK(type_of(out.model, "x") == f32); // graph inputs and outputs keep their types
    CHECK(type_of(out.model, "y") == f32);
    CHECK(out.report.nodes["MatMul"]["float16"] == 1);
    CHECK(out.report.nodes["Exp"]["float32"] == 1);
    CHECK(out.report.kept_reasons["deny_list"] == 1);
    CHECK(out.report.kept_reasons["deny_propagation"] == 1);
    // x and w to float16; r back to float32 once, shared by Exp and Add.
    CHECK(out.report.casts_inserted == 3);
    CHECK(count_op(out.model, "Cast") == 3);
  }

  TEST_CASE("deny reaches clear ops only on their way to an infer or deny op") {
    // TF's own example: deny->infer->clear->infer->clear->allow->infer.
    auto out = lower(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[4,4] x) => (float[4,4] y) {
        d = Exp(x)
        i1 = Add(d, d)
        c1 = Relu(i1)
        i2 = Mul(c1, c1)
        c2 = Transpose(i2)
        a = MatMul(c2, c2)
        i3 = Sub(a, a)
        y = Identity(i3)
      }
    )");
    CHECK(type_of(out.model, "i1") == f32);
    CHECK(type_of(out.model, "c1") == f32);
    CHECK(type_of(out.model, "i2") == f32);
    CHECK(type_of(out.model, "c2") == f32); // clear, leads to no infer/deny: not denied
    CHECK(type_of(out.model, "a") == f16);
    CHECK(type_of(out.model, "i3") == f16);
  }

  TEST_CASE("a Softmax of low values read only by low matrix ops runs low; others stay") {
    // Attention: scores = Q K^T, probs = Softmax(scores), ctx = probs V. The MatMul reading
    // probs rounds them to float16 anyway; float32 would only add two Casts.
    auto out = lower(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2,4] q, float[4,2] k, float[2,4] v) => (float[2,4] y, float[2,2] p2) {
        s = MatMul(q, k)
        p = Softmax(s)
        c = MatMul(p, v)
        y = Relu(c)
        s2 = MatMul(q, k)
        l = LogSoftmax(s2)
        a = Add(l, s2)
        p2 = Identity(a)
      }
    )");
    CHECK(type_of(out.model, "p") == f16);
    CHECK(out.report.nodes["Softmax"]["float16"] == 1);
    CHECK(type_of(out.model, "l") == f32); // read by an Add: its float32 values are used
    CHECK(out.report.nodes["LogSoftmax"]["float32"] == 1);
    CHECK(out.report.kept_reasons["deny_list"] == 1);
    // q, k (once, shared), v to float16; s2 to float32 for the LogSoftmax and the Add; y
    // back to float32 for the output. None around the Softmax.
    CHECK(out.report.casts_inserted == 5);
  }

  TEST_CASE("a Softmax of float32 values, or read by a float32 matrix op, stays float32") {
    auto out = lower(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2,4] x, float[4,4] v) => (float[2,4] y) {
        p = Softmax(x)
        y = MatMul(p, v)
      }
    )");
    CHECK(type_of(out.model, "p") == f32); // its input is a float32 graph input
    auto attention = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2,4] q, float[4,2] k, float[2,4] v) => (float[2,4] y) {
        s = MatMul(q, k)
        p = Softmax(s)
        c = MatMul(p, v)
        y = Relu(c)
      }
    )");
    attention.mutable_graph()->mutable_node(2)->set_name("context");
    npucc::check::infer_shapes_strict(attention);
    auto pinned = options_for(LowPrecision::float16);
    pinned.keep_nodes = {"context"};
    Lowered kept{attention, npucc::precision::rewrite_mixed_precision(attention, pinned)};
    CHECK(type_of(kept.model, "p") == f32); // its reader is kept float32
    auto black = options_for(LowPrecision::float16);
    black.user_denied = {"Softmax"}; // --modify-mixlist '{"black-list": {"to-add": ["Softmax"]}}'
    auto asked = lower(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2,4] q, float[4,2] k, float[2,4] v) => (float[2,4] y) {
        s = MatMul(q, k)
        p = Softmax(s)
        c = MatMul(p, v)
        y = Relu(c)
      }
    )", black);
    CHECK(type_of(asked.model, "p") == f32);
  }

  TEST_CASE("a deny-list node the accuracy descent lowered runs low, unless the user denied its op") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2,4] x, float[4,4] w, float[4] gamma, float[4] beta) => (float[2,4] y) {
        h = MatMul(x, w)
        n = LayerNormalization(h, gamma, beta)
        a = Add(n, h)
        y = Relu(a)
      }
    )");
    model.mutable_graph()->mutable_node(1)->set_name("ln");
    model.mutable_graph()->mutable_node(2)->set_name("add");
    npucc::check::infer_shapes_strict(model);
    auto descended = options_for(LowPrecision::float16);
    descended.lowered_nodes = {"ln"};
    onnx::ModelProto low = model;
    auto report = npucc::precision::rewrite_mixed_precision(low, descended);
    CHECK_NOTHROW(check_valid(low));
    CHECK(type_of(low, "n") == f16);
    CHECK(type_of(low, "a") == f16); // deny no longer reaches the Add after it
    CHECK(report.kept_reasons.count("deny_list") == 0);
    bool marked = false;
    for (const auto& node : report.node_precisions) {
      CHECK(node.accuracy_lowered == (node.name == "ln"));
      marked = marked || (node.name == "ln" && node.precision == "float16");
    }
    CHECK(marked);
    auto plain = model; // as the default policy has it
    report = npucc::precision::rewrite_mixed_precision(plain, options_for(LowPrecision::float16));
    CHECK(type_of(plain, "n") == f32);
    CHECK(report.kept_reasons["deny_list"] == 1);
    descended.user_denied = {"LayerNormalization"}; // the user's black list wins
    auto asked = model;
    report = npucc::precision::rewrite_mixed_precision(asked, descended);
    CHECK(type_of(asked, "n") == f32);
    CHECK(report.kept_reasons["deny_list"] == 1);
  }

  TEST_CASE("Resize scales and normalisation statistics stay float32") {
    SUBCASE("Resize roi and scales") {
      auto out = lower(R"(
        <ir_version: 8, opset_import: ["" : 13]>
        g (float[1,2,4,4] x, float[2,2,1,1] w) => (float[1,2,8,8] y) {
          c = Conv(x, w)
          roi = Constant <value = float[0] {}> ()
          scales = Constant <value = float[4] {1.0, 1.0, 2.0, 2.0}> ()
          r = Resize(c, roi, scales)
          y = Relu(r)
        }
      )");
      CHECK(type_of(out.model, "r") == f16);
      CHECK(type_of(out.model, "scales") == f32);
      CHECK(type_of(out.model, "roi") == f32);
    }
    SUBCASE("BatchNormalization-15 keeps its statistics in float32") {
      auto out = lower(R"(
        <ir_version: 8, opset_import: ["" : 15]>
        g (float[1,2,4,4] x, float[2,2,1,1] w) => (float[1,2,4,4] y) {
          c = Conv(x, w)
          s = Constant <value = float[2] {1.0, 1.0}> ()
          b = Constant <value = float[2] {0.0, 0.0}> ()
          bn = BatchNormalization(c, s, b, b, s)
          y = Relu(bn)
        }
      )");
      CHECK(type_of(out.model, "bn") == f16);
      CHECK(type_of(out.model, "s") == f32);
      CHECK(type_of(out.model, "b") == f32);
    }
    SUBCASE("BatchNormalization-14 ties them to the input, so it stays float32") {
      auto out = lower(R"(
        <ir_version: 8, opset_import: ["" : 14]>
        g (float[1,2,4,4] x, float[2,2,1,1] w) => (float[1,2,4,4] y) {
          c = Conv(x, w)
          s = Constant <value = float[2] {1.0, 1.0}> ()
          b = Constant <value = float[2] {0.0, 0.0}> ()
          bn = BatchNormalization(c, s, b, b, s)
          y = Relu(bn)
        }
      )");
      CHECK(type_of(out.model, "c") == f16);
      CHECK(type_of(out.model, "bn") == f32);
      CHECK(out.report.kept_reasons["schema"] == 1);
    }
  }

  TEST_CASE("float arithmetic on shapes stays float32") {
    auto out = lower(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2,6] x, float[6,6] w) => (float[3,4] y) {
        m = MatMul(x, w)
        s = Shape(m)
        i = Constant <value = int64[1] {1}> ()
        n = Gather(s, i)
        f = Cast <to = 1> (n)
        two = Constant <value = float[1] {2.0}> ()
        h = Div(f, two)
        k = Cast <to = 7> (h)
        three = Constant <value = int64[1] {-1}> ()
        shape = Concat <axis = 0> (three, k)
        y = Reshape(m, shape)
      }
    )");
    CHECK(type_of(out.model, "m") == f16);
    CHECK(type_of(out.model, "h") == f32);
    CHECK(out.report.kept_reasons["shape_arithmetic"] == 3); // Cast, Div, Cast
  }

  TEST_CASE("a batch-axis Transpose read by a MatMul stays float32 (ONNX Runtime crash)") {
    // perm [1, 0, 2] and [1, 2, 0] fuse into FusedMatMul's transBatch; [0, 2, 1] does not.
    auto out = lower(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[7,2,24] x, float[24,24] e, float[24,6] w, float[2,6] v, float[7,6] u)
          => (float[2,7,6] y, float[7,24,6] z, float[2,24,6] q) {
        a = MatMul(x, e)
        t = Transpose <perm = [1, 0, 2]> (a)
        m = MatMul(t, w)
        y = Relu(m)
        s = Transpose <perm = [0, 2, 1]> (a)
        n = MatMul(s, v)
        z = Relu(n)
        r = Transpose <perm = [1, 2, 0]> (a)
        o = MatMul(r, u)
        q = Relu(o)
      }
    )");
    CHECK(type_of(out.model, "a") == f16);
    CHECK(type_of(out.model, "m") == f16);
    CHECK(type_of(out.model, "t") == f32);
    CHECK(type_of(out.model, "r") == f32);
    CHECK(type_of(out.model, "s") == f16);
    CHECK(out.report.kept_reasons["runtime_workaround"] == 2);
  }

  TEST_CASE("a node reading a value of unknown type (a custom op's output) keeps its type") {
    // onnxruntime-genai's blocks: com.microsoft outputs have no inferred type; a lowered
    // MatMul would read one uncast beside a float16 weight (ORT: T bound to two types).
    auto out = lower(R"(
      <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
      g (float[2,8] x, float[8,8] w, float[8,8] e) => (float[2,8] y) {
        h = com.microsoft.SimplifiedLayerNormalization (x)
        m = MatMul(h, w)
        k = MatMul(x, e)
        y = Add(m, k)
      }
    )");
    CHECK(type_of(out.model, "k") == f16);
    CHECK(type_of(out.model, "m") != f16);
    // m's type is unknown too (MatMul's inference takes it from h): Add is the second.
    CHECK(out.report.kept_reasons["input_type_unknown"] == 2);
  }

  TEST_CASE("a Cast back to float32 read by a decomposed layer norm gets a fusion guard") {
    // ORT's LayerNormFusion would drop the Cast and fuse float16 x with float32 scale.
    auto out = lower(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2,8] x, float[8,8] w, float[8] s) => (float[2,8] y) {
        h = MatMul(x, w)
        m = ReduceMean <axes = [-1]> (h)
        d = Sub(h, m)
        q = Mul(d, d)
        v = ReduceMean <axes = [-1]> (q)
        r = Sqrt(v)
        n = Div(d, r)
        y = Mul(n, s)
      }
    )");
    CHECK(type_of(out.model, "h") == f16);
    CHECK(out.report.fusion_guards == 1);
    int guards = 0;
    for (const auto& node : out.model.graph().node()) {
      if (node.op_type() == "Max") {
        CHECK(node.input_size() == 1);
        ++guards;
      }
    }
    CHECK(guards == 1);
  }

  TEST_CASE("an op whose schema forbids bfloat16 at the model's opset stays float32") {
    const std::string text = R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[1,2,4,4] x, float[2,2,1,1] w, float[4,4] v) => (float[1,2,4,4] y, float[1,2,4,4] z) {
        c = Conv(x, w)
        y = Relu(c)
        m = MatMul(x, v)
        z = Relu(m)
      }
    )";
    auto out = lower(text, LowPrecision::bfloat16);
    CHECK(type_of(out.model, "c") == f32);  // Conv gains bfloat16 only in opset 22
    CHECK(type_of(out.model, "m") == bf16); // MatMul-13 has it
    CHECK(out.report.kept_reasons["schema"] == 1);
    auto fp16 = lower(text, LowPrecision::float16);
    CHECK(type_of(fp16.model, "c") == f16);
  }

  TEST_CASE("one Cast per value and type, shared, with a unique name") {
    auto out = lower(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2,4] x, float[4,4] w, float[4,4] v) => (float[2,4] y) {
        x_to_fp16 = Identity(x)
        a = MatMul(x, w)
        b = MatMul(x, v)
        s = Add(a, b)
        t = Add(s, x_to_fp16)
        y = Identity(t)
      }
    )");
    const auto& graph = out.model.graph();
    const auto* a = producer_of(graph, "a");
    const auto* b = producer_of(graph, "b");
    REQUIRE(a != nullptr);
    REQUIRE(b != nullptr);
    CHECK(a->input(0) == b->input(0));
    CHECK(a->input(0) == "x_to_fp16_1");
    const auto* cast = producer_of(graph, a->input(0));
    REQUIRE(cast != nullptr);
    CHECK(cast->op_type() == "Cast");
    CHECK(cast->name() == "x_to_fp16_1");
  }

  TEST_CASE("If bodies reading outer values: shared outer Casts, branch outputs keep types") {
    const std::string text = R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (bool c, float[2,4] x, float[4,4] w) => (float[2,4] y) {
        h = MatMul(x, w)
        y = If(c) <
          then_branch = t () => (float[2,4] ty) { tm = MatMul(h, w)  ty = Relu(tm) },
          else_branch = e () => (float[2,4] ey) { em = MatMul(x, w)  ey = Exp(em) }
        >
      }
    )";
    auto out = lower(text);
    CHECK(type_of(out.model, "h") == f16);
    CHECK(type_of(out.model, "tm") == f16);
    CHECK(type_of(out.model, "em") == f16);
    CHECK(type_of(out.model, "ty") == f32);
    CHECK(type_of(out.model, "ey") == f32);
    // x and w are cast once in the main graph and read by both branches.
    // x and w in the main graph; tm and em back to float32 inside their branches.
    CHECK(out.report.casts_inserted == 4);
    int outer_casts = 0;
    for (const auto& node : out.model.graph().node()) {
      outer_casts += node.op_type() == "Cast" ? 1 : 0;
    }
    CHECK(outer_casts == 2);
  }

  TEST_CASE("a branch-local Conv weight and an outer input agree on the type (silero case)") {
    // A naive conversion lowers the weight inside the branch but not the outer input:
    // "Type parameter (T) of Optype (Conv) bound to different types".
    auto out = lower(R"(
      <ir_version: 8, opset_import: ["" : 16]>
      g (bool c, float[1,2,4,4] x) => (float[1,2,4,4] y) {
        y = If(c) <
          then_branch = t () => (float[1,2,4,4] ty) {
            w = Constant <value = float[2,2,1,1] {1.0, 0.5, 0.25, 2.0}> ()
            tc = Conv(x, w)
            ty = Relu(tc)
          },
          else_branch = e () => (float[1,2,4,4] ey) { ey = Relu(x) }
        >
      }
    )");
    CHECK(type_of(out.model, "w") == f16);
    CHECK(type_of(out.model, "tc") == f16);
    CHECK(type_of(out.model, "ey") == f32);
    // The Cast of x lives in the main graph, where x is defined.
    REQUIRE(out.model.graph().node_size() == 2);
    CHECK(out.model.graph().node(0).op_type() == "Cast");
    CHECK(out.model.graph().node(0).input(0) == "x");
  }

  TEST_CASE("Loop bodies keep carried types consistent with the Loop") {
    auto out = lower(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (int64 n, float[4,4] x, float[4,4] w) => (float[4,4] y) {
        t = Constant <value = bool {1}> ()
        y = Loop(n, t, x) <body = b (int64 i, bool cin, float[4,4] s) => (bool cout, float[4,4] r) {
          cout = Identity(cin)
          m = MatMul(s, w)
          r = Tanh(m)
        }>
      }
    )");
    CHECK(type_of(out.model, "m") == f16);
    CHECK(type_of(out.model, "r") == f32);
    CHECK(type_of(out.model, "s") == f32);
  }

  TEST_CASE("Scan bodies: scanned inputs cast inside, state and outputs keep their types") {
    auto out = lower(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2] init, float[3,2] xs, float[2,2] w) => (float[2] last, float[3,2] ys) {
        last, ys = Scan(init, xs) <num_scan_inputs = 1,
          body = b (float[2] s, float[2] x) => (float[2] s2, float[2] y) {
            m = MatMul(x, w)
            s2 = Add(s, m)
            y = Identity(m)
          }>
      }
    )");
    CHECK(type_of(out.model, "m") == f16);
    CHECK(type_of(out.model, "s2") == f32);
    CHECK(type_of(out.model, "y") == f32);
    CHECK(type_of(out.model, "x") == f32);
    // x inside the body, w in the main graph, m back to float32 (shared by Add and Identity).
    CHECK(out.report.casts_inserted == 3);
  }

  TEST_CASE("idempotent: a second run changes nothing, also on partly float16 models") {
    const std::string text = R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2,4] x, float16[4,4] w16) => (float[2,4] y) {
        w = Cast <to = 1> (w16)
        m = MatMul(x, w)
        e = Exp(m)
        r = Relu(m)
        y = Add(e, r)
      }
    )";
    auto first = lower(text);
    CHECK(first.report.casts_folded == 1); // the float16 input is used as it is
    onnx::ModelProto again = first.model;
    auto report =
        npucc::precision::rewrite_mixed_precision(again, options_for(LowPrecision::float16));
    CHECK(report.casts_inserted == 0);
    CHECK(report.constants_converted == 0);
    CHECK(again.SerializeAsString() == first.model.SerializeAsString());
  }

  TEST_CASE("constants: converted when every reader is low, overflow keeps readers float32") {
    auto out = lower(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2,2] x) => (float[2,2] y, float[2,2] z) {
        w = Constant <value = float[2,2] {1.0, 2.0, 3.0, 4.0}> ()
        big = Constant <value = float[2,2] {70000.0, 1.0, -1e30, 2.0}> ()
        m = MatMul(x, w)
        y = Relu(m)
        n = MatMul(x, big)
        z = Relu(n)
      }
    )");
    CHECK(type_of(out.model, "w") == f16);
    CHECK(type_of(out.model, "big") == f32);
    CHECK(type_of(out.model, "n") == f32);
    CHECK(out.report.kept_reasons["overflow"] == 1);
    REQUIRE(out.report.float32_constants.size() == 1);
    CHECK(out.report.float32_constants[0].name == "big");
    CHECK(out.report.float32_constants[0].reason == "overflow");
    CHECK(out.report.float32_constants[0].overflow_values == 2);
    CHECK(out.report.constants_converted == 1);
    CHECK(out.report.converted_bytes_before == 16);
    CHECK(out.report.converted_bytes_after == 8);
  }

  TEST_CASE("master weights stay float32 and are cast at use; low storage converts them") {
    const std::string text = R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2,2] x, float[2,2] w = {1.0, 2.0, 3.0, 4.0}) => (float[2,2] y) {
        m = MatMul(x, w)
        y = Relu(m)
      }
    )";
    auto options = options_for(LowPrecision::float16);
    options.weights = WeightStorage::master_float32;
    auto train = lower(text, options);
    CHECK(type_of(train.model, "w") == f32);
    CHECK(producer_of(train.model.graph(), "m")->input(1) == "w_to_fp16");
    REQUIRE(train.report.float32_constants.size() == 1);
    CHECK(train.report.float32_constants[0].reason == "master_weight");
    options.weights = WeightStorage::low;
    auto inference = lower(text, options);
    CHECK(type_of(inference.model, "w") == f16);
  }

  TEST_CASE("--keep-dtype pins named nodes; an unknown name is an error") {
    const std::string text = R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2,2] x, float[2,2] w) => (float[2,2] y) {
        m = MatMul(x, w)
        y = Relu(m)
      }
    )";
    auto model = npucc::test::parse_text_model(text);
    model.mutable_graph()->mutable_node(0)->set_name("proj");
    npucc::check::infer_shapes_strict(model);
    auto options = options_for(LowPrecision::float16);
    options.keep_nodes = {"proj"};
    auto report = npucc::precision::rewrite_mixed_precision(model, options);
    CHECK(report.kept_reasons["keep_dtype"] == 1);
    CHECK(report.casts_inserted == 0);
    options.keep_nodes = {"prj"};
    CHECK_THROWS_WITH_AS(npucc::precision::rewrite_mixed_precision(model, options),
                         doctest::Contains("did you mean \"proj\""), npucc::Error);
  }

  TEST_CASE("--no-keep-io-types lowers graph inputs and outputs") {
    auto options = options_for(LowPrecision::float16);
    options.keep_io_types = KeepIoTypes::no;
    auto out = lower(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2,2] x, float[2,2] w) => (float[2,2] y) {
        m = MatMul(x, w)
        y = Relu(m)
      }
    )",
                     options);
    CHECK(type_of(out.model, "x") == f16);
    CHECK(type_of(out.model, "y") == f16);
    CHECK(out.report.casts_inserted == 0);
  }

  TEST_CASE("bfloat16 needs Cast-13: below it nothing is lowered, inputs included") {
    auto options = options_for(LowPrecision::bfloat16);
    options.keep_io_types = KeepIoTypes::no;
    options.policy = Policy::force;
    auto out = lower(R"(
      <ir_version: 7, opset_import: ["" : 11]>
      g (float[2,2] x, float[2,2] w) => (float[2,2] y) {
        m = MatMul(x, w)
        y = Relu(m)
      }
    )",
                     options);
    CHECK(type_of(out.model, "x") == f32);
    CHECK(type_of(out.model, "m") == f32);
    CHECK(out.report.casts_inserted == 0);
  }

  TEST_CASE("force policy lowers deny ops too, matrix_only only allow ops") {
    const std::string text = R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2,2] x, float[2,2] w) => (float[2,2] y) {
        m = MatMul(x, w)
        e = Exp(m)
        r = Relu(e)
        y = Identity(r)
      }
    )";
    auto options = options_for(LowPrecision::float16);
    options.policy = Policy::force;
    auto forced = lower(text, options);
    CHECK(type_of(forced.model, "e") == f16);
    CHECK(type_of(forced.model, "r") == f16);
    options.policy = Policy::matrix_only;
    auto matrix = lower(text, options);
    CHECK(type_of(matrix.model, "m") == f16);
    CHECK(type_of(matrix.model, "e") == f32);
    CHECK(type_of(matrix.model, "r") == f32);
  }
}
