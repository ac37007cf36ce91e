#include "key/cache_key.h"
#include "model/weight_store.h"
#include "npucc/model.h"
#include "precision/float_convert.h"
#include "precision/overflow_prescan.h"
#include "test_support.h"
#include "util/file_io.h"
#include "util/mapped_file.h"

#include <cfloat>
#include <cstring>
#include <doctest/doctest.h>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using npucc::precision::OverflowPrescan;
using npucc::precision::prescanned_overflows;

// `n` floats: mostly small, every 7th past float16's range, every 11th past bfloat16's.
std::vector<float> weights(size_t n, float seed) {
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i) {
    values[i] = seed * static_cast<float>(i % 100) - 3.0f;
    if (i % 7 == 3) {
      values[i] = i % 2 == 0 ? 70000.0f : -1e6f;
    }
    if (i % 11 == 5) {
      values[i] = i % 2 == 0 ? FLT_MAX : -FLT_MAX;
    }
  }
  return values;
}

std::string bytes_of(const std::vector<float>& values) {
  std::string out(values.size() * sizeof(float), '\0');
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

struct Weight {
  std::string name;
  std::vector<float> values;
  uint64_t offset;
};

// A data file holding the weights at their offsets (odd ones included) and a model
// whose initializers refer to them through a WeightStore.
struct Fixture {
  fs::path data_path;
  std::shared_ptr<const npucc::util::MappedFile> file;
  npucc::model::WeightStore store;
  onnx::ModelProto model;
  std::vector<Weight> weights;

  explicit Fixture(std::vector<Weight> given) : weights(std::move(given)) {
    std::string data;
    for (const auto& weight : weights) {
      std::string bytes = bytes_of(weight.values);
      if (data.size() < weight.offset + bytes.size()) {
        data.resize(weight.offset + bytes.size(), 'x');
      }
      data.replace(weight.offset, bytes.size(), bytes);
    }
    data += "tail";
    data_path = npucc::test::temp_dir("prescan") / "w.data";
    npucc::util::write_file_atomic(data_path, data);
    file = npucc::util::MappedFile::map(
        npucc::util::InputFile::open(data_path, npucc::util::InputFile::Links::follow).value());
    for (const auto& weight : weights) {
      auto* tensor = model.mutable_graph()->add_initializer();
      tensor->set_name(weight.name);
      tensor->set_data_type(onnx::TensorProto::FLOAT);
      tensor->add_dims(static_cast<int64_t>(weight.values.size()));
      store.adopt_mapped(*tensor, file, weight.offset, weight.values.size() * sizeof(float));
    }
  }

  std::string_view raw(size_t i) const {
    return *npucc::model::raw_bytes(model.graph().initializer(static_cast<int>(i)));
  }

  // Feeds the whole file in chunks of `chunk` bytes, as the key's reader does.
  void feed(OverflowPrescan& prescan, size_t chunk) const {
    REQUIRE(prescan.files().size() == 1);
    REQUIRE(prescan.files()[0] == file->input());
    int index = 0;
    std::string_view all = file->bytes();
    for (uint64_t position = 0; position < all.size(); position += chunk) {
      prescan.feed(index, position, all.substr(position, chunk));
    }
    prescan.end();
  }
};

} // namespace

TEST_SUITE("npucc::precision::OverflowPrescan") {
  TEST_CASE("counts match the rewrite's own count, whatever the chunks cut") {
    Fixture fixture({{"aligned", weights(5000, 0.5f), 0},
                     {"odd_offset", weights(3001, 1.5f), 20003},
                     {"next_to_it", weights(777, 2.0f), 32007}});
    for (size_t chunk : {size_t{1}, size_t{3}, size_t{7}, size_t{4096}, size_t{1} << 20}) {
      CAPTURE(chunk);
      OverflowPrescan prescan(fixture.model);
      fixture.feed(prescan, chunk);
      for (size_t i = 0; i < fixture.weights.size(); ++i) {
        CAPTURE(fixture.weights[i].name);
        const auto& values = fixture.weights[i].values;
        size_t half = npucc::precision::count_half_overflows(values.data(), values.size());
        size_t bfloat16 = npucc::precision::count_bfloat16_overflows(values.data(), values.size());
        CHECK(half > bfloat16);
        CHECK(bfloat16 > 0);
        CHECK(prescanned_overflows({&prescan}, fixture.raw(i), onnx::TensorProto::FLOAT16) == half);
        CHECK(prescanned_overflows({&prescan}, fixture.raw(i), onnx::TensorProto::BFLOAT16) ==
              bfloat16);
      }
    }
  }

  TEST_CASE("nothing is known without a prescan, unless fed to the end, or for other bytes") {
    Fixture fixture({{"w", weights(4096, 1.0f), 64}});
    CHECK_FALSE(prescanned_overflows({}, fixture.raw(0), onnx::TensorProto::FLOAT16));
    {
      // Ended before reaching the weight (a read error): no wait, no count.
      OverflowPrescan cut_short(fixture.model);
      cut_short.feed(0, 0, fixture.file->bytes().substr(0, 1000));
      cut_short.end();
      CHECK_FALSE(prescanned_overflows({&cut_short}, fixture.raw(0), onnx::TensorProto::FLOAT16));
    }
    {
      OverflowPrescan whole(fixture.model);
      fixture.feed(whole, 4096);
      CHECK(prescanned_overflows({&whole}, fixture.raw(0), onnx::TensorProto::FLOAT16));
      // Another weight's bytes, or a prefix of these, are not this count.
      CHECK_FALSE(prescanned_overflows({&whole}, fixture.raw(0).substr(0, 400),
                                       onnx::TensorProto::FLOAT16));
      CHECK(whole.find(fixture.raw(0)) != nullptr);
      CHECK(whole.find(fixture.raw(0).substr(0, 400)) == nullptr);
    }
    CHECK(OverflowPrescan(fixture.model).files().size() == 1);
  }

  TEST_CASE("the cache key's reader counts a read model's external weights") {
    fs::path dir = npucc::test::temp_dir("prescan-key");
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[6000] x) => (float[6000] y) {
        y = Mul(x, w)
      }
    )");
    auto values = weights(6000, 0.25f);
    npucc::util::write_file_atomic(dir / "m.onnx.data", "pad" + bytes_of(values));
    auto* w = model.mutable_graph()->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(6000);
    npucc::test::set_external(*w, "m.onnx.data", 3, 6000 * 4);
    npucc::util::write_file_atomic(dir / "m.onnx", model.SerializeAsString());
    npucc::Model read = npucc::read_model(dir / "m.onnx", {}, npucc::Weights::in_table);
    npucc::CompileOptions options;
    options.model_path = dir / "m.onnx";
    auto raw = *npucc::model::raw_bytes(read.proto.graph().initializer(0));
    for (auto where :
         {npucc::key::HashOn::second_thread, npucc::key::HashOn::this_thread}) {
      OverflowPrescan prescan(read.proto);
      npucc::key::KeyHashing key(read, options, where, nullptr, &prescan);
      CHECK(prescanned_overflows({&prescan}, raw, onnx::TensorProto::FLOAT16) ==
            npucc::precision::count_half_overflows(values.data(), values.size()));
      CHECK(key.get().key == npucc::key::compute_key(read, options).key);
      npucc::precision::OverflowAssumption assumption;
      CHECK(prescanned_overflows({&prescan, &assumption}, raw, onnx::TensorProto::FLOAT16) == 0);
      CHECK(assumption.assumed());
    }
  }

  TEST_CASE("an assumption answers 0 at once and is checked against the counts") {
    std::vector<float> small(4096, 1.5f);
    Fixture fixture({{"fits", small, 0}, {"overflows", weights(4096, 1.0f), 16384}});
    for (int32_t low : {onnx::TensorProto::FLOAT16, onnx::TensorProto::BFLOAT16}) {
      CAPTURE(low);
      {
        OverflowPrescan prescan(fixture.model);
        npucc::precision::OverflowAssumption assumption;
        CHECK(prescanned_overflows({&prescan, &assumption}, fixture.raw(1), low) ==
              0); // not read yet: no wait
        CHECK(assumption.assumed());
        fixture.feed(prescan, 4096);
        CHECK_FALSE(assumption.holds()); // the weight has values past both types' range
      }
      {
        OverflowPrescan prescan(fixture.model);
        npucc::precision::OverflowAssumption assumption;
        CHECK(prescanned_overflows({&prescan, &assumption}, fixture.raw(0), low) == 0);
        fixture.feed(prescan, 1000);
        CHECK(assumption.holds());
        // Without the assumption, an answer waits for the count.
        CHECK(prescanned_overflows({&prescan}, fixture.raw(1), low) > 0);
      }
      {
        // The reader gave up before the weight: the assumption cannot be checked.
        OverflowPrescan prescan(fixture.model);
        npucc::precision::OverflowAssumption assumption;
        CHECK(prescanned_overflows({&prescan, &assumption}, fixture.raw(0), low) == 0);
        prescan.end();
        CHECK_FALSE(assumption.holds());
      }
      {
        // Counts already there are assumed all the same: the outcome never depends on
        // how far the reader got.
        OverflowPrescan prescan(fixture.model);
        fixture.feed(prescan, 4096);
        npucc::precision::OverflowAssumption assumption;
        CHECK(prescanned_overflows({&prescan, &assumption}, fixture.raw(0), low) == 0);
        CHECK(assumption.holds());
        CHECK(prescanned_overflows({&prescan, &assumption}, fixture.raw(1), low) == 0);
        CHECK(assumption.assumed());
        CHECK_FALSE(assumption.holds());
      }
    }
  }
}
