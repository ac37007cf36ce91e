#include "cache/local_storage.h"
#include "npucc/cache.h"
#include "npucc/error.h"
#include "npucc/train_mode.h"
#include "test_support.h"
#include "util/disk.h"
#include "util/file_io.h"

#include <doctest/doctest.h>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace {

fs::path write_model(const fs::path& dir, const std::string& text,
                     const std::string& name = "m.onnx") {
  return npucc::test::write_text_model(dir / name, text);
}

const char* k_model = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[1,4] x) => (float[1,4] y) {
    a = Relu(x)
    y = Neg(a)
  }
)";

struct Fixture {
  fs::path dir = npucc::test::temp_dir("cc");
  npucc::CacheConfig config;
  Fixture() {
    config.dir = dir / "cache";
    config.dir_source = npucc::SettingSource::command_line;
    npucc::init_cache_dir(config.dir);
  }
  npucc::CachedCompile run(const fs::path& model, const std::string& out,
                           const std::vector<std::string>& passes = {}) {
    npucc::CompileOptions options;
    options.model_path = model;
    options.output_dir = dir / out;
    options.passes = passes;
    return npucc::compile_cached(options, config, npucc::CacheUse::enabled);
  }
};

// Counts the opens of each file (any thread: the key's hash and the writers run beside).
class CountingDisk : public npucc::util::RealDisk {
public:
  int open(const fs::path& path, int flags, mode_t mode) override {
    std::lock_guard<std::mutex> lock(m_mutex);
    ++m_opens[fs::weakly_canonical(path)];
    return RealDisk::open(path, flags, mode);
  }
  int opens(const fs::path& path) {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_opens[fs::weakly_canonical(path)];
  }

private:
  std::mutex m_mutex;
  std::map<fs::path, int> m_opens;
};

// A model whose weight (32 KiB of float32: mapped, counted for overflows) is external data.
fs::path write_external_model(const fs::path& dir) {
  auto proto = npucc::test::parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[8192] x) => (float[8192] y) { y = Mul(x, w) }
  )");
  auto* w = proto.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(8192);
  npucc::test::set_external(*w, "m.onnx.data", 0, 8192 * 4);
  npucc::util::write_file_atomic(dir / "m.onnx.data", std::string(8192 * 4, '\x01'));
  npucc::util::write_file_atomic(dir / "m.onnx", proto.SerializeAsString());
  return dir / "m.onnx";
}

} // namespace

TEST_SUITE("npucc::compile_cached") {
  TEST_CASE("each input file is opened once, on a miss and on a hit through the model index") {
    Fixture f;
    fs::path model = write_external_model(f.dir);
    npucc::CompileOptions options;
    options.model_path = model;
    options.accelerate_train_mode = npucc::parse_accelerate_train_mode("fast|step");
    for (const char* out : {"miss", "hit"}) {
      CAPTURE(out);
      options.output_dir = f.dir / out;
      CountingDisk counting;
      npucc::CachedCompile result;
      {
        npucc::util::ScopedDisk use(counting);
        result = npucc::compile_cached(options, f.config, npucc::CacheUse::enabled);
      }
      CHECK(result.outcome ==
            (std::string(out) == "miss" ? npucc::CacheOutcome::miss : npucc::CacheOutcome::hit));
      // Before: the model four times on a miss (its digest, its mapping, the cut of its
      // weights, the overflow prescan), its data twice (mapping, key).
      CHECK(counting.opens(model) == 1);
      CHECK(counting.opens(f.dir / "m.onnx.data") == 1);
    }
  }

  TEST_CASE("a hit carries the stored compile's precision reports") {
    Fixture f;
    fs::path model = write_model(f.dir, k_model);
    npucc::CompileOptions options;
    options.model_path = model;
    options.output_dir = f.dir / "p1";
    options.accelerate_train_mode = npucc::parse_accelerate_train_mode("fast|step");
    auto miss = npucc::compile_cached(options, f.config, npucc::CacheUse::enabled);
    REQUIRE(miss.outcome == npucc::CacheOutcome::miss);
    REQUIRE_FALSE(miss.result.precision_report.empty());
    options.output_dir = f.dir / "p2";
    auto hit = npucc::compile_cached(options, f.config, npucc::CacheUse::enabled);
    REQUIRE(hit.outcome == npucc::CacheOutcome::hit);
    CHECK(nlohmann::json::parse(hit.result.precision_report) ==
          nlohmann::json::parse(miss.result.precision_report));
  }

  TEST_CASE("a store that --max-size evicts at once is a warning") {
    Fixture f;
    fs::path model = write_model(f.dir, k_model);
    f.config.max_size = 1; // byte: no entry fits
    auto stored = f.run(model, "out1");
    CHECK(stored.outcome == npucc::CacheOutcome::miss);
    CHECK(stored.warning.find("the cache entry just stored") != std::string::npos);
    CHECK(stored.warning.find("evicted the cache entry just stored (") != std::string::npos);
    f.config.max_size = uint64_t{1} << 30;
    CHECK(f.run(model, "out2").warning.empty());
  }

  TEST_CASE("a second compile is a hit with identical files; changes miss") {
    Fixture f;
    fs::path model = write_model(f.dir, k_model);
    auto first = f.run(model, "out1");
    CHECK(first.outcome == npucc::CacheOutcome::miss);
    CHECK(first.reason == "new key");
    CHECK(first.warning.empty());
    auto second = f.run(model, "out2");
    CHECK(second.outcome == npucc::CacheOutcome::hit);
    CHECK(second.key == first.key);
    CHECK(npucc::util::read_file(f.dir / "out1" / "high.onnx") ==
          npucc::util::read_file(f.dir / "out2" / "high.onnx"));
    CHECK(npucc::util::read_file(f.dir / "out1" / "manifest.json") ==
          npucc::util::read_file(f.dir / "out2" / "manifest.json"));
    CHECK(npucc::util::read_file(f.dir / "out2" / "manifest.json").find(first.key) !=
          std::string::npos);
    REQUIRE(second.result.graphs.size() == 1);
    CHECK(second.result.graphs[0].role == "high");

    SUBCASE("an option") {
      CHECK(f.run(model, "out3", {"topological_sort", "topological_sort"}).outcome ==
            npucc::CacheOutcome::miss);
    }
    SUBCASE("one byte of the model") {
      std::string bytes = npucc::util::read_file(model);
      fs::path other = f.dir / "copy" / "m.onnx";
      fs::create_directories(other.parent_path());
      npucc::util::write_file_atomic(other, bytes);
      CHECK(f.run(other, "out3").outcome == npucc::CacheOutcome::hit); // same bytes elsewhere
      auto model2 = npucc::test::parse_text_model(k_model);
      model2.set_producer_name("x");
      model2.SerializeToString(&bytes);
      npucc::util::write_file_atomic(other, bytes);
      CHECK(f.run(other, "out4").outcome == npucc::CacheOutcome::miss);
    }
  }

  TEST_CASE("a corrupt entry is a miss that replaces it") {
    Fixture f;
    fs::path model = write_model(f.dir, k_model);
    auto first = f.run(model, "out1");
    npucc::cache::LocalStorage storage(fs::canonical(f.config.dir));
    fs::path high = storage.entry_dir(first.key) / "high.onnx";
    fs::permissions(high, fs::perms::owner_write, fs::perm_options::add);
    fs::resize_file(high, 3);
    auto second = f.run(model, "out2");
    CHECK(second.outcome == npucc::CacheOutcome::miss);
    CHECK(second.reason.find("corrupt entry replaced") == 0);
    CHECK(storage.verify(npucc::cache::Fix::no).findings.empty());
    CHECK(f.run(model, "out3").outcome == npucc::CacheOutcome::hit);
    CHECK(storage.stats().read()["misses.corrupt"] == 1);
  }

  TEST_CASE("a model with a custom op compiles, is not stored, and the bypass is counted") {
    Fixture f;
    fs::path model = write_model(f.dir, R"(
      <ir_version: 8, opset_import: ["" : 17, "com.acme" : 1]>
      g (float[1,4] x) => (float[1,4] y) {
        a = Relu(x)
        y = com.acme.Magic(a)
      }
    )");
    // An error here (the compiler refusing the op) fails the case: its name says it compiles.
    npucc::CachedCompile result = f.run(model, "out");
    CHECK(result.outcome == npucc::CacheOutcome::bypass);
    CHECK(result.reason.find("com.acme::Magic") != std::string::npos);
    npucc::cache::LocalStorage storage(fs::canonical(f.config.dir));
    CHECK(storage.list(npucc::cache::Check::sizes).empty());
    CHECK(storage.stats().read()["bypass.custom-op"] == 1);
  }

  TEST_CASE("the key changes with the compiler-facing inputs only") {
    Fixture f;
    fs::path model = write_model(f.dir, k_model);
    npucc::CompileOptions options;
    options.model_path = model;
    auto a = npucc::explain_cache_key(options);
    options.output_dir = "/elsewhere";
    CHECK(npucc::explain_cache_key(options).key == a.key);
    options.passes = {"topological_sort", "topological_sort"};
    auto b = npucc::explain_cache_key(options);
    CHECK(b.key != a.key);
    REQUIRE(a.components.size() == 6);
    CHECK(a.components[5].name == "options");
    CHECK(a.components[5].digest != b.components[5].digest);
    CHECK(a.components[3].digest == b.components[3].digest);
  }
}
