#include "output/graph_writer.h"
#include "model/weight_store.h"
#include "npucc/model.h"
#include "test_support.h"
#include "util/file_io.h"
#include "util/sha256.h"

#include <cstring>
#include <doctest/doctest.h>
#include <map>
#include <string>

namespace {

namespace fs = std::filesystem;

constexpr size_t k_shared_floats = 64 * 1024; // 256 KiB per weight

std::string scaled_floats(float scale) {
  std::string bytes(k_shared_floats * sizeof(float), '\0');
  for (size_t i = 0; i < k_shared_floats; ++i) {
    float value = static_cast<float>(i % 1000) * scale;
    std::memcpy(bytes.data() + i * sizeof(float), &value, sizeof(float));
  }
  return bytes;
}

void add_shared_weight(onnx::GraphProto& graph, const std::string& name, uint64_t offset) {
  auto* w = graph.add_initializer();
  w->set_name(name);
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(static_cast<int64_t>(k_shared_floats));
  npucc::test::set_external(*w, "m.onnx.data", offset, k_shared_floats * sizeof(float));
}

// y = (x * w1) * w2, both weights in m.onnx.data: read with their bytes in the table, as a
// compile reads them.
npucc::Model read_model_with_two_weights(const fs::path& dir) {
  auto model = npucc::test::parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[65536] x) => (float[65536] y) {
      t = Mul(x, w1)
      y = Mul(t, w2)
    }
  )");
  add_shared_weight(*model.mutable_graph(), "w1", 0);
  add_shared_weight(*model.mutable_graph(), "w2", k_shared_floats * sizeof(float));
  npucc::util::write_file_atomic(dir / "m.onnx.data", scaled_floats(0.5f) + scaled_floats(2.0f));
  npucc::util::write_file_atomic(dir / "m.onnx", model.SerializeAsString());
  return npucc::read_model(dir / "m.onnx", {}, npucc::Weights::in_table);
}

// Each initializer's external data entries (location, offset, length) as written.
std::map<std::string, std::map<std::string, std::string>> references_in(const fs::path& file) {
  onnx::ModelProto model;
  REQUIRE(model.ParseFromString(npucc::util::read_file(file)));
  std::map<std::string, std::map<std::string, std::string>> out;
  for (const auto& tensor : model.graph().initializer()) {
    for (const auto& entry : tensor.external_data()) {
      out[tensor.name()][entry.key()] = entry.value();
    }
  }
  return out;
}

} // namespace

TEST_SUITE("npucc::output::write_graphs_sharing_weights") {
  TEST_CASE("weights two graphs share are stored once, at one offset both graphs refer to") {
    fs::path dir = npucc::test::temp_dir("shared");
    npucc::Model model = read_model_with_two_weights(dir);
    onnx::ModelProto high = model.proto;
    onnx::ModelProto low = model.proto;
    // The low graph holds w2 converted (bytes of its own), and w1 as the master weight.
    for (auto& tensor : *low.mutable_graph()->mutable_initializer()) {
      if (tensor.name() == "w2") {
        npucc::model::replace_bytes(tensor, scaled_floats(3.0f));
      }
    }
    const std::string high_text = high.SerializeAsString();
    const std::string low_text = low.SerializeAsString();

    fs::path out = npucc::test::temp_dir("shared-out");
    auto written = npucc::output::write_graphs_sharing_weights(
        {{&high, "high.onnx"}, {&low, "low.onnx"}}, out);
    // The callers' models are as they were.
    CHECK(high.SerializeAsString() == high_text);
    CHECK(low.SerializeAsString() == low_text);

    // w1 and high's w2 from high, then low's own w2: three weights, not four.
    const uint64_t weight = k_shared_floats * sizeof(float);
    std::string data = npucc::util::read_file(out / "weights.data");
    CHECK(data.size() == 3 * weight);
    REQUIRE(written.size() == 2);
    for (const auto& graph : written) {
      REQUIRE(graph.external_data.size() == 1);
      CHECK(graph.external_data[0].file == "weights.data");
      CHECK(graph.external_data[0].sha256 == npucc::util::sha256_hex(data));
      CHECK(graph.external_data[0].bytes == data.size());
      CHECK(graph.graph.sha256 ==
            npucc::util::sha256_hex(npucc::util::read_file(out / graph.graph.file)));
      CHECK(graph.written_as.count("weights.data") == 1);
    }
    auto high_refs = references_in(out / "high.onnx");
    auto low_refs = references_in(out / "low.onnx");
    CHECK(high_refs["w1"] == low_refs["w1"]);
    CHECK(high_refs["w2"]["offset"] != low_refs["w2"]["offset"]);
    CHECK(low_refs["w2"]["location"] == "weights.data");

    // Read back (as ONNX Runtime would: through the references), each graph holds its bytes.
    std::map<std::string, std::map<std::string, std::string>> expected = {
        {"high.onnx", {{"w1", scaled_floats(0.5f)}, {"w2", scaled_floats(2.0f)}}},
        {"low.onnx", {{"w1", scaled_floats(0.5f)}, {"w2", scaled_floats(3.0f)}}}};
    for (const auto& [file, weights] : expected) {
      CAPTURE(file);
      npucc::Model back = npucc::read_model(out / file);
      REQUIRE(back.proto.graph().initializer_size() == 2);
      for (const auto& tensor : back.proto.graph().initializer()) {
        CHECK(tensor.raw_data() == weights.at(tensor.name()));
      }
    }
  }

  TEST_CASE("graphs without a tensor of 1 KiB are written whole, with no data file") {
    auto high = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[4] x) => (float[4] y) <float[4] w = {1, 2, 3, 4}> {
        y = Mul(x, w)
      }
    )");
    onnx::ModelProto low = high;
    fs::path out = npucc::test::temp_dir("shared-small");
    auto written = npucc::output::write_graphs_sharing_weights(
        {{&high, "high.onnx"}, {&low, "low.onnx"}}, out);
    for (const auto& graph : written) {
      CHECK(graph.external_data.empty());
    }
    CHECK(!fs::exists(out / "weights.data"));
    CHECK(fs::exists(out / "low.onnx"));
  }
}
