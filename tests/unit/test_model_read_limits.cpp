#include "npucc/error.h"
#include "npucc/model.h"
#include "test_support.h"
#include "util/file_io.h"

#include <doctest/doctest.h>

namespace {

onnx::ModelProto identity_model() {
  return npucc::test::parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1] x) => (float[1] y) { y = Identity(x) }
  )");
}

// `levels` If nodes, each in the then_branch of the one above.
onnx::ModelProto nested_model(int levels) {
  onnx::ModelProto model = identity_model();
  onnx::GraphProto body = model.graph();
  for (int level = 0; level < levels; ++level) {
    onnx::GraphProto outer;
    outer.set_name("level" + std::to_string(level));
    auto* node = outer.add_node();
    node->set_op_type("If");
    node->add_input("c");
    node->add_output("y");
    auto* then_branch = node->add_attribute();
    then_branch->set_name("then_branch");
    then_branch->set_type(onnx::AttributeProto::GRAPH);
    *then_branch->mutable_g() = std::move(body);
    body = std::move(outer);
  }
  *model.mutable_graph() = std::move(body);
  return model;
}

std::string error_of(const std::string& bytes, const npucc::ReadLimits& limits = {}) {
  try {
    npucc::parse_model(bytes, "m.onnx", limits);
  } catch (const npucc::Error& e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_SUITE("npucc::ReadLimits") {
  TEST_CASE("subgraph nesting is limited with a clear message") {
    CHECK(error_of(nested_model(64).SerializeAsString()).find("nested") == std::string::npos);
    for (int levels : {65, 150, 300, 1000, 3000}) {
      CAPTURE(levels);
      CHECK(error_of(nested_model(levels).SerializeAsString()).find("nested more than 64 levels") !=
            std::string::npos);
    }
    npucc::ReadLimits strict;
    strict.max_subgraph_depth = 2;
    CHECK(error_of(nested_model(3).SerializeAsString(), strict).find("more than 2 levels") !=
          std::string::npos);
  }

  TEST_CASE("sparse tensors are limited by their dense size") {
    auto model = identity_model();
    auto* sparse = model.mutable_graph()->add_sparse_initializer();
    sparse->add_dims(int64_t{1} << 40);
    sparse->mutable_values()->set_name("s");
    sparse->mutable_values()->set_data_type(onnx::TensorProto::FLOAT);
    sparse->mutable_values()->add_dims(1);
    sparse->mutable_values()->add_float_data(1);
    sparse->mutable_indices()->set_data_type(onnx::TensorProto::INT64);
    sparse->mutable_indices()->add_dims(1);
    sparse->mutable_indices()->add_int64_data(0);
    CHECK(error_of(model.SerializeAsString()).find("sparse tensor \"s\" has dense dims over") !=
          std::string::npos);
  }

  TEST_CASE("external data over the memory limit is refused before reading, naming the file") {
    auto folder = npucc::test::temp_dir("read-limits");
    npucc::util::write_file_atomic(folder / "w.bin", std::string(4096, '\0'));
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[1024] x) => (float[1024] y) { y = Add(x, w) }
    )");
    auto* w = model.mutable_graph()->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(1024);
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* location = w->add_external_data();
    location->set_key("location");
    location->set_value("w.bin");
    npucc::util::write_file_atomic(folder / "m.onnx", model.SerializeAsString());
    npucc::ReadLimits limits;
    CHECK(npucc::read_model(folder / "m.onnx", limits).external_files.size() == 1);
    limits.max_memory_bytes = 4096; // the .onnx itself takes some of it
    try {
      npucc::read_model(folder / "m.onnx", limits);
      FAIL("expected a refusal");
    } catch (const npucc::Error& e) {
      std::string message = e.what();
      CHECK(message.find("external data in w.bin") != std::string::npos);
      CHECK(message.find("memory limit of 4096 bytes") != std::string::npos);
    }
  }

  TEST_CASE("parse_memory_size takes bytes with binary suffixes") {
    CHECK(npucc::parse_memory_size("4096") == 4096);
    CHECK(npucc::parse_memory_size("8G") == uint64_t{8} << 30);
    CHECK(npucc::parse_memory_size(" 512m ") == uint64_t{512} << 20);
    CHECK_THROWS_AS(npucc::parse_memory_size("0"), npucc::Error);
    CHECK_THROWS_AS(npucc::parse_memory_size("G"), npucc::Error);
    CHECK_THROWS_AS(npucc::parse_memory_size("-1K"), npucc::Error);
    CHECK_THROWS_AS(npucc::parse_memory_size("99999999999T"), npucc::Error);
  }
}
