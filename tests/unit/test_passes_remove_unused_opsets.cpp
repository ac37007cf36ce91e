#include "npucc/model.h"
#include "passes/remove_unused_opsets.h"
#include "test_passes_support.h"

#include <set>

using npucc::passes::RemoveUnusedOpsets;
using npucc::test::check_valid;
using npucc::test::run;
using Domains = std::set<std::string>;

namespace {

Domains domains_of(const onnx::ModelProto& model) {
  Domains domains;
  for (const auto& opset : model.opset_import()) {
    domains.insert(opset.domain());
  }
  return domains;
}

} // namespace

TEST_SUITE("npucc::passes::RemoveUnusedOpsets") {
  TEST_CASE("drops unused domains and keeps the default and used ones") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17, "ai.onnx.ml" : 3, "com.microsoft" : 1,
                                     "com.example" : 1]>
      agraph (float[2] x) => (float[2] y) {
        y = com.example.Op(x)
      }
    )");
    RemoveUnusedOpsets pass;
    CHECK(pass.is_model_pass());
    CHECK(run(pass, model) == 2);
    CHECK(domains_of(model) == Domains{"", "com.example"});
    check_valid(model);
    CHECK(run(pass, model) == 0);
  }

  TEST_CASE("never removes the last import: ONNX's checker wants one (found by fuzzing)") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["com.example" : 1, "com.other" : 2]>
      agraph (float[2] x) => (float[2] x) {
      }
    )");
    RemoveUnusedOpsets pass;
    CHECK(run(pass, model) == 1);
    CHECK(domains_of(model) == Domains{"com.example"});
    check_valid(model);
    CHECK(run(pass, model) == 0);
  }

  TEST_CASE("keeps the default domain even when no node uses it") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17, "com.example" : 1]>
      agraph (float[2] x) => (float[2] y) {
        y = com.example.Op(x)
      }
    )");
    RemoveUnusedOpsets pass;
    CHECK(run(pass, model) == 0);
    CHECK(domains_of(model) == Domains{"", "com.example"});
  }

  TEST_CASE("a domain used only inside an If body stays") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17, "com.example" : 1, "com.unused" : 1]>
      agraph (bool cond, float[2] x) => (float[2] y) {
        y = If(cond) <
          then_branch = g1 () => (float[2] t) { t = com.example.Op(x) },
          else_branch = g2 () => (float[2] e) { e = Neg(x) }>
      }
    )");
    RemoveUnusedOpsets pass;
    CHECK(run(pass, model) == 1);
    CHECK(domains_of(model) == Domains{"", "com.example"});
    check_valid(model);
  }

  TEST_CASE("keeps the domains of model-local functions and of their bodies") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17, "local" : 1, "com.inner" : 1, "com.unused" : 1]>
      agraph (float[2] x) => (float[2] y) {
        y = Neg(x)
      }
    )");
    // A function nothing calls still belongs to the model: its domain and the
    // domains of its body stay importable.
    auto* function = model.add_functions();
    function->set_name("Twice");
    function->set_domain("local");
    function->add_input("a");
    function->add_output("b");
    auto* opset = function->add_opset_import();
    opset->set_domain("com.inner");
    opset->set_version(1);
    auto* node = function->add_node();
    node->set_op_type("Op");
    node->set_domain("com.inner");
    node->add_input("a");
    node->add_output("b");
    RemoveUnusedOpsets pass;
    CHECK(run(pass, model) == 1);
    CHECK(domains_of(model) == Domains{"", "local", "com.inner"});
  }

  TEST_CASE("silero_vad_legacy: the 8 domains it declares but never uses go") {
    auto model = npucc::read_model(npucc::test::testdata("models/silero_vad_legacy.onnx")).proto;
    REQUIRE(model.opset_import_size() == 9);
    RemoveUnusedOpsets pass;
    CHECK(run(pass, model) == 8);
    CHECK(domains_of(model) == Domains{""});
    check_valid(model);
    CHECK(run(pass, model) == 0);
  }
}
