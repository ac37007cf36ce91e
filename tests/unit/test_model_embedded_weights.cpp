#include "model/embedded_weights.h"
#include "model/weight_store.h"
#include "npucc/error.h"
#include "npucc/model.h"
#include "test_support.h"
#include "util/fd.h"
#include "util/file_io.h"

#include <cstring>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <string>

namespace {

namespace fs = std::filesystem;
using npucc::model::cut_embedded_weights;
using npucc::model::WireSource;

std::string floats(size_t count, float scale) {
  std::string bytes(count * sizeof(float), '\0');
  for (size_t i = 0; i < count; ++i) {
    float value = static_cast<float>(i) * scale;
    std::memcpy(bytes.data() + i * sizeof(float), &value, sizeof(float));
  }
  return bytes;
}

void add_weight(onnx::GraphProto& graph, const std::string& name, size_t count, float scale) {
  auto* tensor = graph.add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  tensor->add_dims(static_cast<int64_t>(count));
  tensor->set_raw_data(floats(count, scale));
}

// A main graph with a large and a small initializer, an If whose branch holds a large
// initializer of its own, and a Constant node whose large tensor is an attribute (not an
// initializer: it stays in the skeleton).
onnx::ModelProto test_model() {
  auto model = npucc::test::parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[8192] x, bool c) => (float[8192] y) {
      t = Mul(x, w)
      k = Constant <value = float[2] {1.0, 2.0}> ()
      y = If (c) <then_branch = g1 () => (float[8192] a) { a = Add(t, v) },
                  else_branch = g2 () => (float[8192] b) { b = Sub(t, s) }>
    }
  )");
  auto* graph = model.mutable_graph();
  add_weight(*graph, "w", 8192, 0.5f);
  add_weight(*graph, "s", 8192, 0.25f);
  add_weight(*graph, "small", 4, 1.0f);
  auto* then_branch = graph->mutable_node(2)->mutable_attribute(0)->mutable_g();
  add_weight(*then_branch, "v", 8192, 2.0f);
  auto* value = graph->mutable_node(1)->mutable_attribute(0)->mutable_t();
  value->clear_float_data();
  value->clear_dims();
  value->add_dims(8192);
  value->set_raw_data(floats(8192, 3.0f));
  return model;
}

// test_model() with an initializer held in float_data, as old TensorFlow exporters write
// weights: "f", 8192 floats.
onnx::ModelProto typed_model() {
  onnx::ModelProto model = test_model();
  auto* tensor = model.mutable_graph()->add_initializer();
  tensor->set_name("f");
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  tensor->add_dims(8192);
  for (int i = 0; i < 8192; ++i) {
    tensor->add_float_data(static_cast<float>(i) * 0.125f);
  }
  return model;
}

// A length-delimited field: tag, length, bytes.
std::string length_delimited(uint32_t field, const std::string& bytes) {
  std::string out;
  auto varint = [&](uint64_t value) {
    while (value >= 0x80) {
      out.push_back(static_cast<char>((value & 0x7f) | 0x80));
      value >>= 7;
    }
    out.push_back(static_cast<char>(value));
  };
  varint(uint64_t{field} << 3 | 2);
  varint(bytes.size());
  return out + bytes;
}

// The skeleton parsed, with each left-out raw_data put back from the file's bytes.
onnx::ModelProto restored(const std::string& file, const npucc::model::Skeleton& skeleton) {
  onnx::ModelProto proto;
  REQUIRE(proto.ParseFromString(skeleton.bytes));
  for (const auto& weight : npucc::model::take_left_out(proto, skeleton, "m.onnx")) {
    weight.tensor->set_raw_data(file.substr(weight.slice.offset, weight.slice.length));
  }
  return proto;
}

} // namespace

namespace {

using npucc::test::read_error;

} // namespace

TEST_SUITE("npucc::model::embedded_weights") {
  TEST_CASE("the skeleton leaves out exactly the large initializers, at any depth") {
    const std::string file = test_model().SerializeAsString();
    WireSource source(file);
    auto skeleton = cut_embedded_weights(source, 64);
    REQUIRE(skeleton);
    CHECK(skeleton->slices.size() == 3); // w, s and the branch's v; not small, not the Constant
    CHECK(skeleton->bytes.size() < file.size() - 3 * 8192 * sizeof(float) + 1024);
    CHECK(restored(file, *skeleton).SerializeAsString() == test_model().SerializeAsString());
  }

  TEST_CASE("reading a file with pread gives the same skeleton as reading it in memory") {
    fs::path path = npucc::test::temp_dir("embedded") / "m.onnx";
    const std::string file = test_model().SerializeAsString();
    npucc::util::write_file_atomic(path, file);
    npucc::util::Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    WireSource from_file(fd.get(), file.size());
    WireSource in_memory(file);
    auto a = cut_embedded_weights(from_file, 64);
    auto b = cut_embedded_weights(in_memory, 64);
    REQUIRE(a);
    REQUIRE(b);
    CHECK(a->bytes == b->bytes);
    CHECK(a->slices.size() == b->slices.size());
  }

  TEST_CASE("what the walk does not follow is left to the full parse") {
    onnx::ModelProto model = test_model();
    SUBCASE("a tensor with two raw_data fields (protobuf keeps the last)") {
      // Protobuf serializes one raw_data; a second one is appended by hand, in a second
      // occurrence of the model's graph field (which a parser merges into the first).
      std::string tensor = model.graph().initializer(0).SerializeAsString() +
                           length_delimited(9, floats(8192, 9.0f));
      std::string file =
          model.SerializeAsString() + length_delimited(7, length_delimited(5, tensor));
      WireSource source(file);
      CHECK_FALSE(cut_embedded_weights(source, 64));
    }
    SUBCASE("a field that looks like the walk's marker") {
      auto* tensor = model.mutable_graph()->mutable_initializer(0);
      tensor->GetReflection()->MutableUnknownFields(tensor)->AddVarint(8190, 7);
      std::string file = model.SerializeAsString();
      WireSource source(file);
      CHECK_FALSE(cut_embedded_weights(source, 64));
    }
    SUBCASE("subgraphs nested deeper than the limit") {
      std::string file = model.SerializeAsString();
      WireSource source(file);
      CHECK_FALSE(cut_embedded_weights(source, 0));
    }
  }

  TEST_CASE("every truncation of a model is refused or cut, never read past its end") {
    const std::string file = typed_model().SerializeAsString();
    for (auto scope :
         {npucc::model::TableScope::initializers, npucc::model::TableScope::every_tensor}) {
      for (size_t size = 0; size < file.size(); size += 97) {
        std::string cut = file.substr(0, size);
        WireSource source(cut);
        auto skeleton = cut_embedded_weights(source, 64, scope);
        if (skeleton) {
          for (const auto& slice : skeleton->slices) {
            CHECK(slice.offset + slice.length <= size);
          }
        }
      }
    }
  }

  TEST_CASE("read_model maps a single-file model's weights: the same bytes as a full parse") {
    fs::path path = npucc::test::temp_dir("embedded") / "m.onnx";
    npucc::util::write_file_atomic(path, test_model().SerializeAsString());
    npucc::Model mapped = npucc::read_model(path, {}, npucc::Weights::in_table);
    npucc::Model parsed = npucc::read_model(path, {}, npucc::Weights::in_proto);
    CHECK(mapped.sha256 == parsed.sha256);
    CHECK(mapped.file_bytes == parsed.file_bytes);
    const auto& w = mapped.proto.graph().initializer(0);
    REQUIRE(npucc::model::mapped_slice(w));
    CHECK(*npucc::model::raw_bytes(w) == parsed.proto.graph().initializer(0).raw_data());
    const auto& v = mapped.proto.graph().node(2).attribute(0).g().initializer(0);
    CHECK(npucc::model::mapped_slice(v));
  }

  TEST_CASE("a left-out weight of the wrong length is refused as a parsed one is") {
    onnx::ModelProto model = test_model();
    model.mutable_graph()->mutable_initializer(0)->set_dims(0, 8000);
    fs::path path = npucc::test::temp_dir("embedded") / "m.onnx";
    npucc::util::write_file_atomic(path, model.SerializeAsString());
    auto message = [&](npucc::Weights weights) { return read_error(path, weights); };
    CHECK(message(npucc::Weights::in_table) == message(npucc::Weights::in_proto));
    CHECK(message(npucc::Weights::in_table).find("declares 32000 bytes of data but holds 32768") !=
          std::string::npos);
  }

  TEST_CASE("every_tensor also leaves out Constant values and float_data (their raw bytes)") {
    const std::string file = typed_model().SerializeAsString();
    WireSource source(file);
    auto skeleton = cut_embedded_weights(source, 64, npucc::model::TableScope::every_tensor);
    REQUIRE(skeleton);
    CHECK(skeleton->slices.size() == 5); // w, s, v, the Constant's value and f
    onnx::ModelProto back = restored(file, *skeleton);
    CHECK(back.graph().node(1).attribute(0).t().raw_data() == floats(8192, 3.0f));
    const auto& f = back.graph().initializer(3);
    CHECK(f.float_data_size() == 0);
    CHECK(f.raw_data() == floats(8192, 0.125f)); // packed float_data is raw little-endian
    WireSource again(file);
    CHECK(cut_embedded_weights(again, 64)->slices.size() == 3); // compile's scope: as before
  }

  TEST_CASE("float_data that does not match its tensor stays for the checks to judge") {
    onnx::ModelProto model = typed_model();
    auto* f = model.mutable_graph()->mutable_initializer(3);
    SUBCASE("other dims") {
      f->set_dims(0, 8000);
    }
    SUBCASE("another element type") {
      f->set_data_type(onnx::TensorProto::DOUBLE);
    }
    SUBCASE("raw_data as well") {
      f->set_raw_data(floats(8192, 1.0f));
    }
    const std::string file = model.SerializeAsString();
    WireSource source(file);
    auto skeleton = cut_embedded_weights(source, 64, npucc::model::TableScope::every_tensor);
    REQUIRE(skeleton);
    onnx::ModelProto back = restored(file, *skeleton);
    CHECK(back.graph().initializer(3).float_data_size() == 8192);
  }

  TEST_CASE("all_in_table reads the same values as a full parse, and refuses what it refuses") {
    fs::path path = npucc::test::temp_dir("embedded") / "m.onnx";
    npucc::util::write_file_atomic(path, typed_model().SerializeAsString());
    npucc::Model mapped = npucc::read_model(path, {}, npucc::Weights::all_in_table);
    npucc::Model parsed = npucc::read_model(path, {}, npucc::Weights::in_proto);
    const auto& f = mapped.proto.graph().initializer(3);
    REQUIRE(npucc::model::mapped_slice(f));
    const auto& want = parsed.proto.graph().initializer(3).float_data();
    CHECK(*npucc::model::raw_bytes(f) ==
          std::string_view(reinterpret_cast<const char*>(want.data()), want.size() * 4));
    const auto& value = mapped.proto.graph().node(1).attribute(0).t();
    REQUIRE(npucc::model::mapped_slice(value));
    CHECK(*npucc::model::raw_bytes(value) == floats(8192, 3.0f));
    onnx::ModelProto wrong = typed_model();
    wrong.mutable_graph()->mutable_initializer(3)->set_dims(0, 8000);
    npucc::util::write_file_atomic(path, wrong.SerializeAsString());
    auto message = [&](npucc::Weights weights) { return read_error(path, weights); };
    CHECK(message(npucc::Weights::all_in_table) == message(npucc::Weights::in_proto));
    CHECK(message(npucc::Weights::in_proto).find("declares 8000 elements but holds 8192") !=
          std::string::npos);
  }
}
