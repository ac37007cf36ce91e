#include "output/graph_writer.h"
#include "model/weight_store.h"
#include "npucc/model.h"
#include "test_support.h"
#include "util/file_io.h"
#include "util/sha256.h"

#include <cstring>
#include <doctest/doctest.h>
#include <string>

namespace {

namespace fs = std::filesystem;

constexpr size_t k_floats = 300 * 1024; // 1.2 MB per weight: above the pairing minimum

std::string weight_bytes(float scale) {
  std::string bytes(k_floats * sizeof(float), '\0');
  for (size_t i = 0; i < k_floats; ++i) {
    float value = static_cast<float>(i % 1000) * scale;
    std::memcpy(bytes.data() + i * sizeof(float), &value, sizeof(float));
  }
  return bytes;
}

void add_external(onnx::GraphProto& graph, const std::string& name, uint64_t offset) {
  auto* w = graph.add_initializer();
  w->set_name(name);
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(static_cast<int64_t>(k_floats));
  npucc::test::set_external(*w, "m.onnx.data", offset, k_floats * sizeof(float));
}

// y = (x * w1) * w2, both weights in m.onnx.data: read with their bytes in the table.
npucc::Model read_two_weights(const fs::path& dir) {
  auto model = npucc::test::parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[307200] x) => (float[307200] y) {
      t = Mul(x, w1)
      y = Mul(t, w2)
    }
  )");
  add_external(*model.mutable_graph(), "w1", 0);
  add_external(*model.mutable_graph(), "w2", k_floats * sizeof(float));
  npucc::util::write_file_atomic(dir / "m.onnx.data", weight_bytes(0.5f) + weight_bytes(2.0f));
  npucc::util::write_file_atomic(dir / "m.onnx", model.SerializeAsString());
  return npucc::read_model(dir / "m.onnx", {}, npucc::Weights::in_table);
}

size_t common_prefix(const std::string& a, const std::string& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) {
    ++n;
  }
  return n;
}

} // namespace

TEST_SUITE("npucc::output::GraphPairWriter") {
  TEST_CASE("padding fields take exactly the bytes asked for and parse as unknown fields") {
    for (uint64_t bytes = 0; bytes < 20000; bytes = bytes == 0 ? 4 : bytes + 1) {
      CAPTURE(bytes);
      std::string padding = npucc::output::graph_padding(bytes);
      REQUIRE(padding.size() == bytes);
      onnx::GraphProto graph;
      REQUIRE(graph.ParseFromString(padding));
      CHECK(graph.node_size() == 0);
      CHECK(graph.initializer_size() == 0);
    }
    CHECK_THROWS(npucc::output::graph_padding(2));
  }

  TEST_CASE("two graphs with the same weights begin with the same bytes and read back whole") {
    fs::path dir = npucc::test::temp_dir("pair");
    npucc::Model model = read_two_weights(dir);
    onnx::ModelProto high = model.proto;
    onnx::ModelProto low = model.proto;
    // The low graph is longer (a node more) and lists its weights in another order.
    auto* cast = low.mutable_graph()->add_node();
    cast->set_op_type("Identity");
    cast->add_input("y");
    cast->add_output("z");
    low.mutable_graph()->mutable_initializer()->SwapElements(0, 1);
    const std::string high_text = high.SerializeAsString();
    const std::string low_text = low.SerializeAsString();

    fs::path out = npucc::test::temp_dir("pair-out");
    auto writer = npucc::output::GraphPairWriter::plan(high, low, out, "high.onnx", "low.onnx",
                                                         npucc::ExternalData::automatic);
    REQUIRE(writer != nullptr);
    auto [high_written, low_written] = writer->write();
    writer.reset();
    // The callers' models are as they were.
    CHECK(high.SerializeAsString() == high_text);
    CHECK(low.SerializeAsString() == low_text);

    std::string high_file = npucc::util::read_file(out / "high.onnx");
    std::string low_file = npucc::util::read_file(out / "low.onnx");
    CHECK(high_file.size() == low_file.size()); // the shorter graph is padded
    CHECK(common_prefix(high_file, low_file) > 2 * k_floats * sizeof(float));
    CHECK(high_written.graph.sha256 == npucc::util::sha256_hex(high_file));
    CHECK(low_written.graph.sha256 == npucc::util::sha256_hex(low_file));
    CHECK(high_written.graph.bytes == high_file.size());

    for (auto [file, nodes] :
         {std::pair<fs::path, int>{out / "high.onnx", 2}, {out / "low.onnx", 3}}) {
      CAPTURE(file);
      npucc::Model back = npucc::read_model(file);
      CHECK(back.proto.graph().node_size() == nodes);
      REQUIRE(back.proto.graph().initializer_size() == 2);
      for (const auto& tensor : back.proto.graph().initializer()) {
        CHECK(tensor.raw_data() == weight_bytes(tensor.name() == "w1" ? 0.5f : 2.0f));
      }
      CHECK(back.proto.opset_import_size() == 1);
      CHECK(back.proto.ir_version() == 8);
    }
  }

  TEST_CASE("graphs that share too few weights are written one by one") {
    fs::path dir = npucc::test::temp_dir("pair");
    npucc::Model model = read_two_weights(dir);
    onnx::ModelProto high = model.proto;
    onnx::ModelProto low = model.proto;
    // The low graph stores its own bytes for both weights (converted weights).
    for (auto& tensor : *low.mutable_graph()->mutable_initializer()) {
      npucc::model::replace_bytes(tensor, weight_bytes(3.0f));
    }
    fs::path out = npucc::test::temp_dir("pair-out");
    CHECK(npucc::output::GraphPairWriter::plan(high, low, out, "high.onnx", "low.onnx",
                                                 npucc::ExternalData::automatic) == nullptr);
    CHECK(npucc::output::GraphPairWriter::plan(high, high, out, "high.onnx", "low.onnx",
                                                 npucc::ExternalData::always) == nullptr);
    CHECK(fs::is_empty(out));
  }
}
