// inspect reads a model as compile does (its large weights left in the mapped files): every
// figure it prints must be the one a full parse of the model (every weight in the protobuf,
// what inspect read before issue 32) gives.
#include "model/graph_walk.h"
#include "model/weight_store.h"
#include "npucc/error.h"
#include "npucc/inspect.h"
#include "test_support.h"
#include "util/file_io.h"

#include <cstring>
#include <doctest/doctest.h>

namespace {

namespace fs = std::filesystem;

// What `npucc inspect` prints, in each of its four forms, for a model read one way.
struct Printed {
  std::string text;
  std::string json;
  std::string nodes_text;
  std::string nodes_json;
};

Printed print_all(const npucc::Model& model, const npucc::InspectOptions& options) {
  Printed out;
  const npucc::InspectReport report = npucc::inspect_model(model, options);
  out.text = npucc::inspect_report_text(report);
  out.json = npucc::inspect_report_json(report);
  const std::vector<npucc::NodeSummary> nodes = npucc::list_nodes(model);
  out.nodes_text = npucc::node_list_text(nodes);
  out.nodes_json = npucc::node_list_json(model.path, nodes);
  return out;
}

// Inspect's reading against a full parse of `path`; returns how many tensors inspect's
// reading left outside the protobuf (so a test can tell the cheap path was taken).
int compare_readings(const fs::path& path, const npucc::InspectOptions& options = {}) {
  const npucc::Model full = npucc::read_model(path, options.limits, npucc::Weights::in_proto);
  const npucc::Model cheap = npucc::read_model_for_inspect(path, options.limits);
  const Printed want = print_all(full, options);
  const Printed got = print_all(cheap, options);
  CHECK(got.text == want.text);
  CHECK(got.json == want.json);
  CHECK(got.nodes_text == want.nodes_text);
  CHECK(got.nodes_json == want.nodes_json);
  int left_out = 0;
  onnx::GraphProto graph = cheap.proto.graph(); // a copy of names and dims only
  npucc::model::for_each_tensor(graph, [&](onnx::TensorProto& tensor) {
    left_out += npucc::model::is_stored(tensor) ? 1 : 0;
  });
  return left_out;
}

// What inspect prints for `path` read one way, or the error it stops with.
std::string outcome(const fs::path& path, npucc::Weights weights) {
  try {
    const npucc::Model model = npucc::read_model(path, {}, weights);
    const Printed printed = print_all(model, {});
    return printed.text + printed.json + printed.nodes_text + printed.nodes_json;
  } catch (const npucc::Error& e) {
    return std::string("error: ") + e.what();
  }
}

// `source` rewritten into `dir` with every tensor of 1 KiB or more (initializers, in
// subgraphs too, and Constant values) in one external data file, as exporters write
// models over 2 GB.
fs::path with_external_data(const fs::path& source, const fs::path& dir) {
  onnx::ModelProto proto;
  REQUIRE(proto.ParseFromString(npucc::util::read_file(source)));
  std::string data;
  npucc::model::for_each_tensor(*proto.mutable_graph(), [&](onnx::TensorProto& tensor) {
    if (tensor.raw_data().size() >= 1024) {
      const std::string bytes = tensor.raw_data();
      npucc::test::set_external(tensor, "weights.bin", data.size(), bytes.size());
      data += bytes;
    }
  });
  REQUIRE(!data.empty());
  fs::create_directories(dir);
  const fs::path model = dir / source.filename();
  npucc::util::write_file_atomic(dir / "weights.bin", data);
  npucc::util::write_file_atomic(model, proto.SerializeAsString());
  return model;
}

// `source` rewritten into `dir` with its float32 tensors' values in float_data instead of
// raw_data, as old TensorFlow exporters write weights.
fs::path with_float_data(const fs::path& source, const fs::path& dir) {
  onnx::ModelProto proto;
  REQUIRE(proto.ParseFromString(npucc::util::read_file(source)));
  npucc::model::for_each_tensor(*proto.mutable_graph(), [&](onnx::TensorProto& tensor) {
    if (tensor.data_type() == onnx::TensorProto::FLOAT && tensor.has_raw_data()) {
      const std::string bytes = tensor.raw_data();
      tensor.clear_raw_data();
      tensor.mutable_float_data()->Resize(static_cast<int>(bytes.size() / 4), 0.0f);
      std::memcpy(tensor.mutable_float_data()->mutable_data(), bytes.data(), bytes.size());
    }
  });
  fs::create_directories(dir);
  const fs::path model = dir / source.filename();
  npucc::util::write_file_atomic(model, proto.SerializeAsString());
  return model;
}

const char* const k_bundled[] = {"models/oww_hello_deepa.onnx",
                                 "models/ppocr_cls.onnx",
                                 "models/ppocrv4_det.onnx",
                                 "models/silero_vad_legacy.onnx",
                                 "models/torch/lstm_tagger.onnx",
                                 "models/torch/resnet_small.onnx",
                                 "models/torch/transformer_encoder.onnx"};

} // namespace

TEST_SUITE("npucc::read_model_for_inspect") {
  TEST_CASE("bundled models: the same figures as a full parse") {
    int left_out = 0;
    for (const char* name : k_bundled) {
      const std::string shown = name;
      CAPTURE(shown);
      left_out += compare_readings(npucc::test::testdata(name));
    }
    // Initializers of 16 KiB or more (silero, oww, the torch models) stayed in the file.
    CHECK(left_out > 10);
  }

  TEST_CASE("with --input-shape: the same memory plan") {
    npucc::InspectOptions options;
    options.input_shapes = npucc::parse_input_shapes("x:1,3,640,640");
    compare_readings(npucc::test::testdata("models/ppocrv4_det.onnx"), options);
  }

  TEST_CASE("external data: the same figures, the weights left in the data file") {
    const fs::path dir = npucc::test::temp_dir("inspect-external");
    // ppocrv4_det holds its weights in Constant nodes; transformer_encoder's are all under
    // 16 KiB, which stay in the protobuf.
    const std::pair<const char*, bool> models[] = {
        {"models/silero_vad_legacy.onnx", true},
        {"models/torch/resnet_small.onnx", true},
        {"models/ppocrv4_det.onnx", true},
        {"models/torch/transformer_encoder.onnx", false}};
    for (const auto& [name, some_left_out] : models) {
      const std::string shown = name;
      CAPTURE(shown);
      const fs::path folder = dir / fs::path(name).stem();
      const fs::path model = with_external_data(npucc::test::testdata(name), folder);
      CHECK((compare_readings(model) > 0) == some_left_out);
      const npucc::InspectReport report = npucc::inspect_model(model);
      REQUIRE(report.external_files.size() == 1);
      CHECK(report.external_files[0].bytes_used == fs::file_size(folder / "weights.bin"));
    }
  }

  TEST_CASE("float_data: the same figures, the weights left in the file") {
    const fs::path dir = npucc::test::temp_dir("inspect-float-data");
    for (const char* name : {"models/silero_vad_legacy.onnx", "models/ppocrv4_det.onnx"}) {
      const std::string shown = name;
      CAPTURE(shown);
      const fs::path model =
          with_float_data(npucc::test::testdata(name), dir / fs::path(name).stem());
      CHECK(compare_readings(model) > 0);
    }
  }

  TEST_CASE("damaged models (the fuzz regressions): the same error or figures as a full parse") {
    const fs::path dir = npucc::test::temp_dir("inspect-damaged");
    for (const auto& entry :
         fs::directory_iterator(npucc::test::testdata("fuzz-regressions/fuzz_model_reader"))) {
      const std::string shown = entry.path().filename().string();
      CAPTURE(shown);
      const fs::path model = dir / "m.onnx";
      fs::copy_file(entry.path(), model, fs::copy_options::overwrite_existing);
      CHECK(outcome(model, npucc::Weights::all_in_table) ==
            outcome(model, npucc::Weights::in_proto));
    }
  }
}
