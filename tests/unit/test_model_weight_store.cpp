#include "output/graph_writer.h"
#include "model/weight_store.h"
#include "npucc/error.h"
#include "npucc/model.h"
#include "test_support.h"
#include "util/file_io.h"
#include "util/mapped_file.h"

#include <cstring>
#include <doctest/doctest.h>
#include <string>

namespace {

namespace fs = std::filesystem;

// 8192 floats (32 KiB, above the table threshold) with distinct bytes.
std::string weight_bytes(float scale) {
  std::string bytes(8192 * sizeof(float), '\0');
  for (size_t i = 0; i < 8192; ++i) {
    float value = static_cast<float>(i) * scale;
    std::memcpy(bytes.data() + i * sizeof(float), &value, sizeof(float));
  }
  return bytes;
}

// y = x * w + b: w (32 KiB) in MODEL.data when `external`, else inline; b is small.
fs::path write_model(const fs::path& dir, bool external) {
  auto model = npucc::test::parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[8192] x) => (float[8192] y) {
      t = Mul(x, w)
      y = Add(t, b)
    }
  )");
  auto* graph = model.mutable_graph();
  auto* w = graph->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(8192);
  w->set_raw_data(weight_bytes(0.5f));
  auto* b = graph->add_initializer();
  b->set_name("b");
  b->set_data_type(onnx::TensorProto::FLOAT);
  b->add_dims(1);
  b->add_float_data(1.0f);
  fs::path path = dir / "m.onnx";
  if (external) {
    std::string data = "0123456789abcdef" + w->raw_data(); // offset 16
    npucc::util::write_file_atomic(dir / "m.onnx.data", data);
    npucc::test::set_external(*w, "m.onnx.data", 16, 8192 * 4);
  }
  npucc::util::write_file_atomic(path, model.SerializeAsString());
  return path;
}

const onnx::TensorProto& initializer(const onnx::ModelProto& model, const std::string& name) {
  for (const auto& tensor : model.graph().initializer()) {
    if (tensor.name() == name) {
      return tensor;
    }
  }
  FAIL("no initializer " << name);
  return model.graph().initializer(0);
}

} // namespace

TEST_SUITE("npucc::model::WeightStore") {
  TEST_CASE("large initializers stay outside the protobuf and are written back intact") {
    for (bool external : {false, true}) {
      CAPTURE(external);
      fs::path dir = npucc::test::temp_dir("weights");
      fs::path path = write_model(dir, external);

      npucc::Model plain = npucc::read_model(path);
      CHECK_FALSE(npucc::model::is_stored(initializer(plain.proto, "w")));
      CHECK(initializer(plain.proto, "w").raw_data() == weight_bytes(0.5f));

      npucc::Model model = npucc::read_model(path, {}, npucc::Weights::in_table);
      const auto& w = initializer(model.proto, "w");
      CHECK(npucc::model::is_stored(w));
      CHECK_FALSE(npucc::model::is_unloaded_external(w));
      CHECK_FALSE(w.has_raw_data());
      CHECK(model.proto.ByteSizeLong() < 4096); // metadata only
      REQUIRE(npucc::model::raw_bytes(w).has_value());
      CHECK(*npucc::model::raw_bytes(w) == weight_bytes(0.5f));
      CHECK_FALSE(npucc::model::is_stored(initializer(model.proto, "b")));

      // A copy refers to the same bytes.
      onnx::ModelProto copy = model.proto;
      CHECK(*npucc::model::raw_bytes(initializer(copy, "w")) == weight_bytes(0.5f));

      for (auto mode : {npucc::ExternalData::automatic, npucc::ExternalData::always}) {
        fs::path out = npucc::test::temp_dir("weights-out");
        auto written = npucc::output::write_graph(model.proto, out, "g.onnx", mode);
        CHECK(written.external_data.size() == (mode == npucc::ExternalData::always ? 1u : 0u));
        // The written file is ordinary ONNX: read back, the weights are the same bytes,
        // and its checksum is the file's.
        npucc::Model back = npucc::read_model(out / "g.onnx");
        CHECK(initializer(back.proto, "w").raw_data() == weight_bytes(0.5f));
        CHECK(back.proto.graph().node_size() == 2);
        CHECK(back.sha256 == written.graph.sha256);
        // The caller's model is unchanged.
        CHECK(npucc::model::is_stored(initializer(model.proto, "w")));
      }
    }
  }

  TEST_CASE("mapped weights are written from the file as it was opened, even once it is replaced") {
    fs::path dir = npucc::test::temp_dir("weights");
    fs::path path = write_model(dir, true);
    npucc::Model model = npucc::read_model(path, {}, npucc::Weights::in_table);
    auto slice = npucc::model::mapped_slice(initializer(model.proto, "w"));
    REQUIRE(slice.has_value());
    CHECK(slice->offset == 16);
    CHECK(slice->length == 8192 * sizeof(float));
    CHECK_FALSE(npucc::model::mapped_slice(initializer(model.proto, "b")));
    CHECK(slice->file->read_fd() >= 0);

    auto write_and_read_back = [&] {
      fs::path out = npucc::test::temp_dir("weights-out");
      npucc::output::write_graph(model.proto, out, "g.onnx", npucc::ExternalData::automatic);
      return initializer(npucc::read_model(out / "g.onnx").proto, "w").raw_data();
    };
    CHECK(write_and_read_back() == weight_bytes(0.5f));
    // Another file now has the data file's name: the writer reads the file it opened
    // (one descriptor for every reader), never the new one.
    npucc::util::write_file_atomic(dir / "m.onnx.data", "0123456789abcdef" + weight_bytes(9.0f));
    CHECK(write_and_read_back() == weight_bytes(0.5f));
  }

  TEST_CASE("new bytes for a stored tensor stay in its store; released stores are refused") {
    fs::path path = write_model(npucc::test::temp_dir("weights"), true);
    onnx::ModelProto orphan;
    {
      npucc::Model model = npucc::read_model(path, {}, npucc::Weights::in_table);
      auto& w = *model.proto.mutable_graph()->mutable_initializer(0);
      npucc::model::replace_bytes(w, weight_bytes(2.0f));
      CHECK(npucc::model::is_stored(w));
      CHECK(*npucc::model::raw_bytes(w) == weight_bytes(2.0f));
      npucc::model::materialize(w);
      CHECK_FALSE(npucc::model::is_stored(w));
      CHECK(w.raw_data() == weight_bytes(2.0f));
      orphan = npucc::read_model(path, {}, npucc::Weights::in_table).proto;
    }
    CHECK_THROWS_AS(npucc::model::raw_bytes(orphan.graph().initializer(0)), npucc::Error);
  }
}
