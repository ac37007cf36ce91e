#include "compiler/validate.h"
#include "passes/fuse_hard_activations.h"
#include "passes/registry.h"
#include "precision/compile_precision.h"
#include "test_passes_support.h"

#include <algorithm>

using npucc::passes::FuseHardActivations;
using npucc::test::check_valid;
using npucc::test::count_ops;
using npucc::test::inputs_of;
using npucc::test::run;
using Names = std::vector<std::string>;

namespace {

// A typed model: the pass reads shapes from inference, as in the precision rewrite.
onnx::ModelProto typed(const std::string& text) {
  auto model = npucc::test::parse_text_model(text);
  npucc::compiler::check_and_infer(model, npucc::compiler::Checker::before);
  return model;
}

// `body` computes y from x (float[1,4,2,2]) at `opset`, with the constants three, six,
// sixth, zero and one_sixth_b (1/6 as a Constant node) at hand.
std::string model_text(int opset, const std::string& body, const std::string& outputs = "y") {
  std::string declared;
  std::string rest = outputs;
  while (!rest.empty()) {
    auto comma = rest.find(',');
    std::string name = rest.substr(0, comma);
    declared += (declared.empty() ? "" : ", ") + std::string("float[1,4,2,2] ") + name;
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
  }
  return "<ir_version: " + std::to_string(npucc::test::ir_version_for(opset)) +
         ", opset_import: [\"\" : " + std::to_string(opset) +
         "]>\n"
         "g (float[1,4,2,2] x) => (" +
         declared +
         ")\n"
         "<float three = {3.0}, float six = {6.0}, float sixth = {0.16666667}, "
         "float zero = {0.0}> {\n" +
         body + "\n}\n";
}

const std::string k_paddle = R"(
  a = Add(x, three)
  c = Clip(a, zero, six)
  m = Mul(x, c)
  y = Div(m, six)
)";

const onnx::NodeProto& only_node(const onnx::GraphProto& graph) {
  REQUIRE(graph.node_size() == 1);
  return graph.node(0);
}

float attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name) {
      return a.f();
    }
  }
  FAIL("no attribute " << name);
  return 0;
}

} // namespace

TEST_SUITE("npucc::passes::FuseHardActivations") {
  TEST_CASE("Paddle's x * Clip(x + 3, 0, 6) / 6 becomes one HardSwish; its constants go") {
    auto model = typed(model_text(14, k_paddle));
    FuseHardActivations pass;
    CHECK(run(pass, model) == 1);
    const auto& node = only_node(model.graph());
    CHECK(node.op_type() == "HardSwish");
    CHECK(inputs_of(node) == Names{"x"});
    CHECK(node.output(0) == "y");
    CHECK(model.graph().initializer_size() == 1); // sixth: never read, not the pass's to remove
    CHECK(model.graph().initializer(0).name() == "sixth");
    CHECK(pass.fused() == std::map<std::string, int64_t>{{"HardSwish", 1}});
    check_valid(model);
    CHECK(run(pass, model) == 0);
  }

  TEST_CASE("the torch and relu6 forms, Mul by 1/6 either way round, HardSigmoid * x") {
    const std::vector<std::string> forms = {
        // x * (relu6(x + 3) / 6), relu6 as Min(Relu(t), 6)
        "a = Add(three, x)\n r = Relu(a)\n c = Min(r, six)\n h = Div(c, six)\n y = Mul(x, h)",
        // (x * relu6(x + 3)) * 1/6, relu6 as Min(Max(t, 0), 6)
        "a = Add(x, three)\n p = Max(zero, a)\n c = Min(p, six)\n m = Mul(c, x)\n"
        " y = Mul(sixth, m)",
        // relu6 as Max(Min(t, 6), 0) and as Relu(Min(t, 6))
        "a = Add(x, three)\n q = Min(a, six)\n c = Max(q, zero)\n m = Mul(x, c)\n"
        " y = Div(m, six)",
        "a = Add(x, three)\n q = Min(a, six)\n c = Relu(q)\n h = Mul(c, sixth)\n y = Mul(h, x)",
        "h = HardSigmoid <alpha = 0.16666667> (x)\n y = Mul(x, h)",
    };
    for (const auto& body : forms) {
      CAPTURE(body);
      auto model = typed(model_text(14, body));
      FuseHardActivations pass;
      CHECK(run(pass, model) == 1);
      CHECK(only_node(model.graph()).op_type() == "HardSwish");
      CHECK(inputs_of(model.graph().node(0)) == Names{"x"});
      check_valid(model);
    }
  }

  TEST_CASE("below opset 14 only the HardSigmoid part fuses; Clip-6 bounds as attributes") {
    auto model = typed(model_text(9, R"(
      a = Add(x, three)
      c = Clip <min = 0.0, max = 6.0> (a)
      h = Div(c, six)
      y = Mul(x, h)
    )"));
    FuseHardActivations pass;
    CHECK(run(pass, model) == 1);
    const auto& graph = model.graph();
    REQUIRE(graph.node_size() == 2);
    CHECK(graph.node(0).op_type() == "HardSigmoid");
    CHECK(attribute(graph.node(0), "alpha") == doctest::Approx(1.0 / 6.0));
    CHECK(attribute(graph.node(0), "beta") == 0.5F);
    CHECK(inputs_of(graph.node(1)) == Names{"x", "h"});
    CHECK(pass.fused() == std::map<std::string, int64_t>{{"HardSigmoid", 1}});
    check_valid(model);
    // The form Paddle writes has no HardSigmoid inside: at opset 13 it stays.
    auto paddle = typed(model_text(13, k_paddle));
    CHECK(run(pass, paddle) == 0);
    CHECK(paddle.graph().node_size() == 4);
  }

  TEST_CASE("other functions stay: another constant, HardSigmoid's alpha 0.2, another x") {
    const std::vector<std::string> bodies = {
        "a = Add(x, six)\n c = Clip(a, zero, six)\n m = Mul(x, c)\n y = Div(m, six)",
        "a = Add(x, three)\n c = Clip(a, zero, three)\n m = Mul(x, c)\n y = Div(m, six)",
        "a = Add(x, three)\n c = Clip(a, zero, six)\n m = Mul(x, c)\n y = Div(six, m)",
        "h = HardSigmoid(x)\n y = Mul(x, h)",
        "n = Neg(x)\n a = Add(x, three)\n c = Clip(a, zero, six)\n m = Mul(n, c)\n"
        " y = Div(m, six)",
    };
    for (const auto& body : bodies) {
      CAPTURE(body);
      auto model = typed(model_text(14, body));
      const int nodes = model.graph().node_size();
      FuseHardActivations pass;
      CHECK(run(pass, model) == 0);
      CHECK(model.graph().node_size() == nodes);
    }
  }

  TEST_CASE("an intermediate value read twice or returned keeps the form as written") {
    auto shared = typed(model_text(14, k_paddle + "\n z = Neg(c)", "y,z"));
    FuseHardActivations pass;
    CHECK(run(pass, shared) == 0);
    auto returned = typed(model_text(14, k_paddle, "y,m"));
    CHECK(run(pass, returned) == 0);
    CHECK(count_ops(returned.graph(), "Clip") == 1);
  }

  TEST_CASE("a constant still read elsewhere stays; a node named by --keep-dtype blocks") {
    auto model = typed(model_text(14, k_paddle + "\n z = Add(y, three)", "z"));
    FuseHardActivations pass;
    CHECK(run(pass, model) == 1);
    const auto& inits = model.graph().initializer();
    CHECK(
        std::any_of(inits.begin(), inits.end(), [](const auto& t) { return t.name() == "three"; }));
    CHECK_FALSE(
        std::any_of(inits.begin(), inits.end(), [](const auto& t) { return t.name() == "zero"; }));
    check_valid(model);

    auto kept = typed(model_text(14, R"(
      a = Add(x, three)
      c = Clip(a, zero, six)
      m = Mul(x, c)
      y = Div(m, six)
    )"));
    kept.mutable_graph()->mutable_node(1)->set_name("relu6");
    FuseHardActivations keeping({"relu6"});
    CHECK(run(keeping, kept) == 0);
    CHECK(kept.graph().node_size() == 4);
  }

  TEST_CASE("a constant wider than x, or one a graph input overrides, is no scalar here") {
    auto wide = typed(R"(
      <ir_version: 8, opset_import: ["" : 14]>
      g (float[4] x) => (float[1,4] y)
      <float[1,1] three = {3.0}, float six = {6.0}, float zero = {0.0}> {
        a = Add(x, three)
        c = Clip(a, zero, six)
        m = Mul(x, c)
        y = Div(m, six)
      }
    )");
    FuseHardActivations pass;
    CHECK(run(pass, wide) == 0);
    auto fed = typed(R"(
      <ir_version: 8, opset_import: ["" : 14]>
      g (float[4] x, float three) => (float[4] y)
      <float three = {3.0}, float six = {6.0}, float zero = {0.0}> {
        a = Add(x, three)
        c = Clip(a, zero, six)
        m = Mul(x, c)
        y = Div(m, six)
      }
    )");
    CHECK(run(pass, fed) == 0);
  }

  TEST_CASE("constants held in Constant nodes, inside an If branch too") {
    auto model = typed(R"(
      <ir_version: 8, opset_import: ["" : 14]>
      g (bool cond, float[4] x) => (float[4] y) {
        y = If(cond) <
          then_branch = t () => (float[4] r) {
            three = Constant <value = float {3.0}> ()
            six = Constant <value = float {6.0}> ()
            zero = Constant <value = float {0.0}> ()
            a = Add(x, three)
            c = Clip(a, zero, six)
            m = Mul(x, c)
            r = Div(m, six)
          },
          else_branch = e () => (float[4] s) { s = Neg(x) }>
      }
    )");
    FuseHardActivations pass;
    CHECK(run(pass, model) == 1);
    const auto& branch = model.graph().node(0).attribute(0).g();
    CHECK(only_node(branch).op_type() == "HardSwish");
    check_valid(model);
  }

  TEST_CASE("registered, but not in the default pipeline") {
    auto pass = npucc::passes::create_pass("fuse_hard_activations");
    CHECK(std::string(pass->unit()) == "activations fused");
    const auto pipeline = npucc::passes::default_pipeline();
    CHECK(std::find(pipeline.begin(), pipeline.end(), "fuse_hard_activations") == pipeline.end());
  }

  TEST_CASE("fast1 fuses in the low graph only; the high graph keeps the model's nodes") {
    auto model = npucc::test::parse_text_model(
        model_text(14, "w = Conv(x, kernel)\n a = Add(w, three)\n c = Clip(a, zero, six)\n"
                       " m = Mul(w, c)\n y = Div(m, six)"));
    auto* kernel = model.mutable_graph()->add_initializer();
    kernel->set_name("kernel");
    kernel->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : {4, 4, 1, 1}) {
      kernel->add_dims(d);
    }
    for (int i = 0; i < 16; ++i) {
      kernel->add_float_data(i % 5 == 0 ? 1.0F : 0.0F);
    }
    npucc::compiler::check_and_infer(model, npucc::compiler::Checker::before);
    npucc::CompileOptions options;
    options.accelerate_train_mode = npucc::parse_accelerate_train_mode("fast1|step|0.9");
    auto build = npucc::precision::build_precision_variants(model, options);
    REQUIRE(build.graphs.size() == 2);
    CHECK(build.graphs[0].role == "high");
    CHECK(count_ops(build.graphs[0].model.graph(), "Clip") == 1);
    CHECK(build.graphs[1].role == "low");
    CHECK(count_ops(build.graphs[1].model.graph(), "HardSwish") == 1);
    CHECK(count_ops(build.graphs[1].model.graph(), "Clip") == 0);
    CHECK(build.report.at("fused_activations").at("HardSwish") == 1);
  }
}
