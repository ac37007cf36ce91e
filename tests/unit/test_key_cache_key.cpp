#include "key/cache_key.h"
#include "test_support.h"
#include "util/file_io.h"

#include <doctest/doctest.h>

namespace fs = std::filesystem;
using namespace npucc::key;

namespace {

// A one-Relu model written to a new temporary folder: its path, and its bytes in `bytes`.
fs::path relu_model(const char* folder, std::string& bytes) {
  auto proto = npucc::test::parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) { y = Relu(x) }
  )");
  proto.SerializeToString(&bytes);
  fs::path path = npucc::test::temp_dir(folder) / "m.onnx";
  npucc::util::write_file_atomic(path, bytes);
  return path;
}

} // namespace

TEST_SUITE("npucc::key::CacheKey") {
  TEST_CASE("the parse-free identity gives the same key as the parsed model") {
    std::string bytes;
    const fs::path path = relu_model("key", bytes);
    npucc::Model model = npucc::read_model(path);
    npucc::CompileOptions options;
    options.model_path = path;

    ModelIdentity identity;
    identity.file_name = "m.onnx";
    identity.bytes = bytes.size();
    identity.sha256 = model.sha256;
    npucc::CacheKey parsed = compute_key(model, options);
    npucc::util::InputFiles inputs;
    npucc::CacheKey fast = compute_key(identity, options, nullptr, inputs);
    CHECK(parsed.key == fast.key);
    REQUIRE(parsed.components.size() == 6);
    CHECK(parsed.components[0].value == k_key_salt);

    SUBCASE("the compiler version and salt are separate components") {
      CHECK(parsed.components[1].name == "compiler");
      CHECK(parsed.components[0].digest != parsed.components[1].digest);
    }
    SUBCASE("the compiler build is a component: the executable and the ONNX library") {
      CHECK(parsed.components[2].name == "build");
      CHECK(parsed.components[2].value.find("npucc=") == 0);
      CHECK(parsed.components[2].value.find(" libonnx") != std::string::npos);
    }
    SUBCASE("an output folder is not part of the key") {
      options.output_dir = "/somewhere";
      CHECK(compute_key(identity, options, nullptr, inputs).key == fast.key);
    }
  }

  TEST_CASE("the schedule and a declared input shape leave the key alone, on every path") {
    std::string bytes;
    const fs::path path = relu_model("key-schedule", bytes);
    npucc::Model model = npucc::read_model(path);
    npucc::CompileOptions options;
    options.model_path = path;
    options.accelerate_train_mode = npucc::parse_accelerate_train_mode("fast|step|0.9");
    const npucc::CacheKey first = compute_key(model, options);
    CHECK(first.components[0].value == std::string("npucc-cache-key/2"));

    options.accelerate_train_mode = npucc::parse_accelerate_train_mode("fast|loss|1.2");
    options.input_shapes = npucc::parse_input_shapes("x:2");
    npucc::CacheKey second = compute_key(model, options);
    CHECK(second.key == first.key);
    REQUIRE(second.not_in_key.size() == 2);
    CHECK(second.not_in_key[0].value == "fast|loss|1.2");
    CHECK(second.not_in_key[1].value == "x:2");
    for (auto where : {HashOn::second_thread, HashOn::this_thread}) {
      KeyHashing hashing(model, options, where);
      npucc::CacheKey hashed = hashing.get();
      CHECK(hashed.key == first.key);
      CHECK(hashed.not_in_key.size() == 2);
    }
    options.accelerate_train_mode = npucc::parse_accelerate_train_mode("fast1|loss|1.2");
    CHECK(compute_key(model, options).key != first.key);
  }

  TEST_CASE("the key hashed in the background equals the key hashed in line") {
    fs::path dir = npucc::test::temp_dir("key-bg");
    auto proto = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2] x) => (float[2] y) { y = Relu(x) }
    )");
    // Two external data files (one of several MiB: several reads), the second twice.
    auto add = [&](const std::string& name, const std::string& location) {
      auto* tensor = proto.mutable_graph()->add_initializer();
      tensor->set_name(name);
      tensor->set_data_type(1);
      tensor->add_dims(location == "a.bin" ? (3 << 20) / 4 : 4);
      tensor->set_data_location(onnx::TensorProto::EXTERNAL);
      auto* entry = tensor->add_external_data();
      entry->set_key("location");
      entry->set_value(location);
    };
    add("w1", "a.bin");
    add("w2", "b.bin");
    add("w3", "b.bin");
    npucc::util::write_file_atomic(dir / "a.bin", std::string(3 << 20, 'a'));
    npucc::util::write_file_atomic(dir / "b.bin", std::string(16, 'b'));
    std::string bytes;
    proto.SerializeToString(&bytes);
    npucc::util::write_file_atomic(dir / "m.onnx", bytes);
    npucc::Model model = npucc::read_model(dir / "m.onnx");
    npucc::CompileOptions options;
    options.model_path = dir / "m.onnx";
    REQUIRE(model.external_files.size() >= 2);
    npucc::CacheKey in_line = compute_key(model, options);
    for (auto where : {HashOn::second_thread, HashOn::this_thread}) {
      KeyHashing hashing(model, options, where);
      npucc::CacheKey hashed = hashing.get();
      CHECK(hashed.key == in_line.key);
      REQUIRE(hashed.components.size() == in_line.components.size());
      CHECK(hashed.components[3].value == in_line.components[3].value); // files and bytes
    }

    SUBCASE("changed external bytes change both alike") {
      npucc::util::write_file_atomic(dir / "a.bin", std::string(3 << 20, 'z'));
      KeyHashing again(model, options, HashOn::second_thread);
      npucc::CacheKey changed = again.get();
      CHECK(changed.key != in_line.key);
      CHECK(changed.key == compute_key(model, options).key);
    }
  }
}
