#include "accuracy/samples.h"

#include "npucc/error.h"
#include "test_support.h"

#include <cstring>
#include <doctest/doctest.h>
#include <fstream>
#include <limits>

using namespace npucc;
namespace fs = std::filesystem;

namespace {

std::string npy_float32(const std::string& shape, size_t count) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) {
    header += ' ';
  }
  header += '\n';
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += static_cast<char>(header.size());
  out += '\0';
  return out + header + std::string(count * 4, '\0');
}

void write(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

void write_pb(const fs::path& path, const std::string& name, std::vector<int64_t> dims) {
  onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(onnx::TensorProto::FLOAT);
  int64_t count = 1;
  for (int64_t dim : dims) {
    proto.add_dims(dim);
    count *= dim;
  }
  proto.set_raw_data(std::string(static_cast<size_t>(count) * 4, '\0'));
  write(path, proto.SerializeAsString());
}

// x: float32[1, ?, 4] and y: float32[2].
std::vector<accuracy::ModelInput> inputs() {
  return {{"x", onnx::TensorProto::FLOAT, {1, -1, 4}}, {"y", onnx::TensorProto::FLOAT, {2}}};
}

} // namespace

TEST_SUITE("npucc::accuracy::samples") {
  TEST_CASE("a sample holding NaN is refused naming the file, the input and the counts") {
    auto dir = test::temp_dir("nonfinite");
    std::string bad = npy_float32("(4,)", 4);
    const float values[4] = {std::numeric_limits<float>::quiet_NaN(), 2,
                             std::numeric_limits<float>::infinity(),
                             std::numeric_limits<float>::quiet_NaN()};
    std::memcpy(&bad[bad.size() - 16], values, 16);
    write(dir / "sets" / "0" / "x.npy", npy_float32("(4,)", 4));
    write(dir / "sets" / "1" / "x.npy", bad);
    const std::vector<accuracy::ModelInput> x{{"x", onnx::TensorProto::FLOAT, {-1}}};
    CHECK_THROWS_WITH_AS(accuracy::load_samples({dir / "sets"}, x),
                         ("--sample-inputs " + (dir / "sets" / "1" / "x.npy").string() +
                          ": input 'x' holds 2 NaN and 1 infinite value(s) of 4: no figure "
                          "compares outputs computed from them")
                             .c_str(),
                         Error);
    CHECK(accuracy::load_samples({dir / "sets"}, x, "--sample-inputs", {}, true).count() == 2);
  }

  TEST_CASE("model_inputs skips initializers and reads dynamic dims as -1") {
    auto model = test::parse_text_model(R"(<ir_version: 8, opset_import: ["" : 17]>
      g (float[1, N] x, float[3] w) => (float[1, N] y) <float[3] w = {1, 2, 3}> { y = Relu(x) })");
    auto found = accuracy::model_inputs(model.graph());
    REQUIRE(found.size() == 1);
    CHECK(found[0].name == "x");
    CHECK(found[0].dims == std::vector<int64_t>{1, -1});
  }

  TEST_CASE("a folder of .npy files named after the inputs is one set, in the inputs' order") {
    auto dir = test::temp_dir("npy");
    write(dir / "y.npy", npy_float32("(2,)", 2));
    write(dir / "x.npy", npy_float32("(1, 7, 4)", 28));
    auto samples = accuracy::load_samples({dir}, inputs());
    CHECK(samples.origin == "samples");
    REQUIRE(samples.sets.size() == 1);
    CHECK(samples.sets[0][0].name == "x");
    CHECK(samples.sets[0][0].shape == std::vector<int64_t>{1, 7, 4});
    CHECK(samples.sets[0][1].name == "y");
  }

  TEST_CASE("ONNX test data sets: one set per folder, unnamed tensors by position") {
    auto dir = test::temp_dir("pb");
    for (const char* set : {"test_data_set_0", "test_data_set_1"}) {
      write_pb(dir / set / "input_0.pb", "", {1, 3, 4});
      write_pb(dir / set / "input_1.pb", "y", {2});
    }
    auto samples = accuracy::load_samples({dir}, inputs());
    CHECK(samples.sets.size() == 2);
    CHECK(samples.sets[1][0].name == "x");
    // One such folder alone, and several paths together.
    CHECK(accuracy::load_samples({dir / "test_data_set_1", dir}, inputs()).sets.size() == 3);
  }

  TEST_CASE("mismatches name the sample file, the input and what was expected") {
    auto dir = test::temp_dir("bad");
    write(dir / "shape" / "x.npy", npy_float32("(1, 7, 5)", 35));
    write(dir / "shape" / "y.npy", npy_float32("(2,)", 2));
    CHECK_THROWS_WITH_AS(accuracy::load_samples({dir / "shape"}, inputs()),
                         doctest::Contains("x.npy: input 'x' is float32[1,7,5], the model expects "
                                           "float32[1,?,4]"),
                         Error);
    write(dir / "name" / "z.npy", npy_float32("(2,)", 2));
    CHECK_THROWS_WITH_AS(accuracy::load_samples({dir / "name"}, inputs()),
                         doctest::Contains("z.npy: 'z' is not an input of the model (its inputs: x, y)"),
                         Error);
    write(dir / "missing" / "y.npy", npy_float32("(2,)", 2));
    CHECK_THROWS_WITH_AS(accuracy::load_samples({dir / "missing"}, inputs()),
                         doctest::Contains("gives no value for input 'x' (float32[1,?,4])"), Error);
    write_pb(dir / "type" / "test_data_set_0" / "input_0.pb", "y", {2});
    {
      onnx::TensorProto proto;
      proto.set_name("x");
      proto.set_data_type(onnx::TensorProto::DOUBLE);
      for (int64_t d : {1, 1, 4}) {
        proto.add_dims(d);
      }
      proto.set_raw_data(std::string(32, '\0'));
      write(dir / "type" / "test_data_set_0" / "input_1.pb", proto.SerializeAsString());
    }
    CHECK_THROWS_WITH_AS(accuracy::load_samples({dir / "type"}, inputs()),
                         doctest::Contains("input_1.pb: input 'x' is float64[1,1,4]"), Error);
    CHECK_THROWS_WITH_AS(accuracy::load_samples({dir / "nothing-here"}, inputs()),
                         doctest::Contains("no such file or folder"), Error);
    fs::create_directories(dir / "empty");
    CHECK_THROWS_WITH_AS(accuracy::load_samples({dir / "empty"}, inputs()),
                         doctest::Contains("no samples in the folder"), Error);
  }

  TEST_CASE("random inputs: the same on every run, in [-1, 1); a dynamic dim is refused") {
    std::vector<accuracy::ModelInput> fixed = {{"x", onnx::TensorProto::FLOAT, {2, 3}},
                                               {"i", onnx::TensorProto::INT64, {4}}};
    auto a = accuracy::random_samples(fixed);
    auto b = accuracy::random_samples(fixed);
    CHECK(a.origin == "random");
    REQUIRE(a.sets.size() == 1);
    CHECK(a.sets[0][0].bytes == b.sets[0][0].bytes);
    std::vector<float> values(6);
    std::memcpy(values.data(), a.sets[0][0].bytes.data(), 24);
    for (float v : values) {
      CHECK(v >= -1.0f);
      CHECK(v < 1.0f);
    }
    CHECK(values[0] != values[1]);
    for (size_t i = 0; i < 4; ++i) {
      int64_t v = 0;
      std::memcpy(&v, a.sets[0][1].bytes.data() + i * 8, 8);
      CHECK((v == 0 || v == 1));
    }
    CHECK_THROWS_WITH_AS(accuracy::random_samples(inputs()),
                         doctest::Contains("input 'x' has a dynamic dim (float32[1,?,4])"), Error);
  }

  TEST_CASE("the samples' digest follows contents and relative names, not the folder's place") {
    auto a = test::temp_dir("digest_a");
    auto b = test::temp_dir("digest_b");
    write(a / "x.npy", "one");
    write(b / "x.npy", "one");
    CHECK(accuracy::samples_digest({a}) == accuracy::samples_digest({b}));
    write(b / "x.npy", "two");
    CHECK(accuracy::samples_digest({a}) != accuracy::samples_digest({b}));
    write(b / "x.npy", "one");
    fs::rename(b / "x.npy", b / "y.npy");
    CHECK(accuracy::samples_digest({a}) != accuracy::samples_digest({b}));
  }
}

TEST_SUITE("npucc::accuracy::samples walk") {
  TEST_CASE("a folder of set folders (.npy or input_*.pb, one level deep) is one set per folder") {
    auto dir = test::temp_dir("set_folders");
    write(dir / "a" / "x.npy", npy_float32("(1, 2, 4)", 8));
    write(dir / "a" / "y.npy", npy_float32("(2,)", 2));
    write_pb(dir / "b" / "input_0.pb", "x", {1, 5, 4});
    write_pb(dir / "b" / "input_1.pb", "y", {2});
    fs::create_directories(dir / "c" / "deeper"); // holds nothing usable: skipped
    write(dir / "c" / "deeper" / "x.npy", npy_float32("(1, 2, 4)", 8));
    auto samples = accuracy::load_samples({dir}, inputs());
    REQUIRE(samples.count() == 2);
    CHECK(samples.sources[0] == (dir / "a").string());
    CHECK(samples.sets[0][0].shape == std::vector<int64_t>{1, 2, 4});
    CHECK(samples.sources[1] == (dir / "b").string());
    CHECK(samples.sets[1][0].shape == std::vector<int64_t>{1, 5, 4});
  }

  TEST_CASE("a symlinked set is read and digested through the link, and only read files count") {
    auto team = test::temp_dir("linked_team");
    auto mine = test::temp_dir("linked_mine");
    write_pb(team / "input_0.pb", "x", {1, 3, 4});
    write_pb(team / "input_1.pb", "y", {2});
    fs::create_directory_symlink(team, mine / "test_data_set_0");
    const auto before = accuracy::samples_digest({mine});
    CHECK(accuracy::load_samples({mine}, inputs()).count() == 1);
    write_pb(team / "input_0.pb", "x", {1, 6, 4}); // the team's data changes under the link
    const auto after = accuracy::samples_digest({mine});
    CHECK(before != after);
    const auto again = accuracy::load_samples({mine}, inputs());
    CHECK(again.sets[0][0].shape == std::vector<int64_t>{1, 6, 4});
    write(team / "NOTES.txt", "not a sample"); // not read, so not digested
    CHECK(accuracy::samples_digest({mine}) == after);
    fs::create_symlink(team / "input_1.pb", mine / "test_data_set_0_y.pb"); // not read either
    CHECK(accuracy::samples_digest({mine}) == after);
  }

  TEST_CASE("held out: every 4th set of 8 or more, in order; none of fewer") {
    auto dir = test::temp_dir("holdout");
    for (int i = 0; i < 10; ++i) {
      write_pb(dir / ("test_data_set_" + std::to_string(i)) / "input_0.pb", "x", {1, i + 1, 4});
      write_pb(dir / ("test_data_set_" + std::to_string(i)) / "input_1.pb", "y", {2});
    }
    auto samples = accuracy::load_samples({dir}, inputs());
    auto held = accuracy::hold_out(samples);
    REQUIRE(held.count() == 2);
    CHECK(held.sets[0][0].shape[1] == 4); // test_data_set_3
    CHECK(held.sets[1][0].shape[1] == 8); // test_data_set_7
    CHECK(samples.count() == 8);
    CHECK(samples.sets[3][0].shape[1] == 5);
    auto few = accuracy::load_samples({dir / "test_data_set_0", dir / "test_data_set_1"}, inputs());
    CHECK(accuracy::hold_out(few).count() == 0);
    CHECK(few.count() == 2);
  }

  TEST_CASE("samples over the held budget are read a batch at a time; a changed set is refused") {
    auto dir = test::temp_dir("batches");
    for (int i = 0; i < 6; ++i) { // 1 x 25 x 4 floats: 400 bytes of data each
      write_pb(dir / ("test_data_set_" + std::to_string(i)) / "input_0.pb", "x", {1, 25, 4});
      write_pb(dir / ("test_data_set_" + std::to_string(i)) / "input_1.pb", "y", {2});
    }
    accuracy::SampleBudget budget;
    budget.held_bytes = 1000;
    budget.batch_bytes = 1000; // two sets a batch
    auto samples = accuracy::load_samples({dir}, inputs(), "--sample-inputs", budget);
    CHECK(samples.sets.empty());
    REQUIRE(samples.batches().size() == 3);
    CHECK(samples.batches()[1] == std::pair<size_t, size_t>(2, 4));
    auto middle = samples.load(2, 4);
    REQUIRE(middle.size() == 2);
    CHECK(middle[1][0].shape == std::vector<int64_t>{1, 25, 4});
    CHECK(samples.load(2, 4)[0][0].bytes == middle[0][0].bytes); // read again alike
    write_pb(dir / "test_data_set_3" / "input_0.pb", "x", {1, 24, 4});
    CHECK_THROWS_WITH_AS(samples.load(2, 4),
                         doctest::Contains("test_data_set_3: the sample set changed"), Error);
  }
}
