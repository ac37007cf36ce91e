#include "passes/op_version.h"
#include "test_passes_support.h"

using npucc::passes::op_version;
using npucc::passes::version_is_one_of;

namespace {

onnx::ModelProto importing(const std::vector<std::pair<std::string, int64_t>>& opsets) {
  onnx::ModelProto model;
  model.set_ir_version(10);
  for (const auto& [domain, version] : opsets) {
    auto* opset = model.add_opset_import();
    opset->set_domain(domain);
    opset->set_version(version);
  }
  return model;
}

onnx::NodeProto node_of(const std::string& op, const std::string& domain = "") {
  onnx::NodeProto node;
  node.set_op_type(op);
  node.set_domain(domain);
  return node;
}

} // namespace

TEST_SUITE("npucc::passes::op_version") {
  TEST_CASE("the since-version of the schema in force at the model's opset") {
    const auto model = importing({{"", 21}});
    CHECK(op_version(node_of("Reshape"), &model) == 21);
    CHECK(op_version(node_of("ReduceMean"), &model) == 18);
    CHECK(op_version(node_of("Split"), &model) == 18);
    CHECK(op_version(node_of("Cast"), &model) == 21);
    CHECK(op_version(node_of("Gather"), &model) == 13);
    // "ai.onnx" on the node or the import is the default domain too.
    CHECK(op_version(node_of("Reshape", "ai.onnx"), &model) == 21);
    const auto spelled = importing({{"ai.onnx", 19}});
    CHECK(op_version(node_of("Reshape"), &spelled) == 19);
    CHECK(op_version(node_of("Shape"), &spelled) == 19);
  }

  TEST_CASE("no version: an op not yet defined, a domain not imported, an opset above 26") {
    const auto model = importing({{"", 21}});
    CHECK(op_version(node_of("Attention"), &model) == 0); // from 23
    CHECK(op_version(node_of("Normalizer", "ai.onnx.ml"), &model) == 0);
    CHECK(op_version(node_of("Anything", "com.example"), &model) == 0);
    const auto newer = importing({{"", 27}});
    CHECK(op_version(node_of("Reshape"), &newer) == 0);
    CHECK(op_version(node_of("Reshape"), nullptr) == 0);
    const auto ml = importing({{"", 21}, {"ai.onnx.ml", 5}});
    CHECK(op_version(node_of("Normalizer", "ai.onnx.ml"), &ml) == 1);
  }

  TEST_CASE("version_is_one_of") {
    const auto model = importing({{"", 25}});
    CHECK(version_is_one_of(node_of("Identity"), &model, {1, 13, 14, 16, 19, 21, 23, 24, 25}));
    CHECK_FALSE(version_is_one_of(node_of("Identity"), &model, {1, 13, 14, 16}));
    CHECK_FALSE(version_is_one_of(node_of("Attention", "com.example"), &model, {0}));
  }
}
