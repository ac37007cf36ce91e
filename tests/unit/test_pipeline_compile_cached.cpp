#include "cache/local_storage.h"
#include "npucc/cache.h"
#include "npucc/error.h"
#include "npucc/train_mode.h"
#include "test_support.h"
#include "util/file_io.h"

#include <doctest/doctest.h>
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

} // namespace

TEST_SUITE("npucc::compile_cached") {
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
    npucc::CachedCompile result;
    try {
      result = f.run(model, "out");
    } catch (const npucc::Error& e) {
      // The compiler may refuse an op it cannot type; the bypass is still decided first.
      MESSAGE("compile refused the custom op: " << e.what());
      return;
    }
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
