#include "npucc/compile_request.h"
#include "npucc/error.h"
#include "test_support.h"
#include "util/file_io.h"

#include <doctest/doctest.h>

namespace fs = std::filesystem;

namespace {

// No NPUCC_* variable and no config file: only what a test passes counts.
const npucc::GetEnv k_no_environment = npucc::test::fake_getenv({{"HOME", "/nonexistent"}});

npucc::CompileRequest request(const std::vector<npucc::OptionValue>& values) {
  return npucc::compile_request("m.onnx", "out", values, k_no_environment);
}

std::string usage_line(const std::vector<npucc::OptionValue>& values) {
  try {
    request(values);
  } catch (const npucc::Error& e) {
    CHECK(e.status() == npucc::ExitStatus::usage);
    return e.line();
  }
  return "no error";
}

} // namespace

TEST_SUITE("config::compile_request") {
  TEST_CASE("no options: the CLI's defaults") {
    npucc::CompileRequest r = request({});
    CHECK(r.options.model_path == "m.onnx");
    CHECK(r.options.output_dir == "out");
    CHECK_FALSE(r.options.accelerate_train_mode.has_value());
    CHECK(r.options.keep_io_types);
    CHECK(r.options.replace_output == npucc::OutputReplace::npucc_files);
    CHECK(r.use == npucc::CacheUse::enabled);
    CHECK(r.cache.dir_source == npucc::SettingSource::built_in);
  }

  TEST_CASE("every option is applied") {
    fs::path dir = npucc::test::temp_dir("request");
    npucc::util::write_file_atomic(dir / "keep.txt", "b\n# comment\na\n");
    npucc::util::write_file_atomic(dir / "mix.json", "{\"black-list\": {\"to-add\": [\"Exp\"]}}");
    npucc::CompileRequest r = request({{"input-shape", "x:1,3"},
                                       {"external-data", "true"},
                                       {"passes", "fold_constants, eliminate_dead_code"},
                                       {"target-opset", "18"},
                                       {"accelerate-train-mode", "fast1|loss"},
                                       {"modify-mixlist", (dir / "mix.json").string()},
                                       {"keep-dtype", (dir / "keep.txt").string()},
                                       {"keep-io-types", "false"},
                                       {"low-precision-weights", "true"},
                                       {"emit-emulation", "true"},
                                       {"cache-dir", dir.string()},
                                       {"max-size", "1M"},
                                       {"read-only", "true"},
                                       {"cache-shared", "group"},
                                       {"no-cache", "true"},
                                       {"force", "true"},
                                       {"max-memory", "2G"}});
    REQUIRE(r.options.input_shapes.size() == 1);
    CHECK(r.options.input_shapes[0].dims == std::vector<int64_t>{1, 3});
    CHECK(r.options.external_data == npucc::ExternalData::always);
    CHECK(r.options.passes == std::vector<std::string>{"fold_constants", "eliminate_dead_code"});
    CHECK(r.options.target_opset == 18);
    REQUIRE(r.options.accelerate_train_mode.has_value());
    CHECK(r.options.accelerate_train_mode->to_string() == "fast1|loss|1.05");
    CHECK(r.options.modify_mixlist.find("black-list") != std::string::npos);
    CHECK(r.options.keep_dtype_nodes == std::vector<std::string>{"a", "b"});
    CHECK_FALSE(r.options.keep_io_types);
    CHECK(r.options.low_precision_weights);
    CHECK(r.options.emit_emulation);
    CHECK(r.cache.dir == dir);
    CHECK(r.cache.dir_origin == "--cache-dir");
    CHECK(r.cache.max_size == uint64_t{1} << 20);
    CHECK(r.cache.access == npucc::CacheAccess::read_only);
    CHECK(r.cache.sharing == npucc::CacheSharing::group);
    CHECK(r.use == npucc::CacheUse::disabled);
    CHECK(r.options.replace_output == npucc::OutputReplace::any);
    CHECK(r.options.limits.max_memory_bytes == uint64_t{2} << 30);
  }

  TEST_CASE("every compile option of the table is accepted") {
    for (const auto& name : npucc::compile_option_names()) {
      CAPTURE(name);
      if (name == "sample-inputs" || name == "validation-inputs" || name == "accuracy-target") {
        continue; // repeated: every value given counts, '' too (refused in its own test)
      }
      try {
        request({{name, ""}}); // empty: as if not given
      } catch (const npucc::Error& e) {
        FAIL(e.line());
      }
    }
  }

  TEST_CASE("an empty value given on purpose resets a setting over the environment") {
    auto env = npucc::test::fake_getenv(
        {{"HOME", "/nonexistent"}, {"NPUCC_ACCELERATE_TRAIN_MODE", "fast|step"}});
    CHECK(npucc::compile_request("m.onnx", "out", {}, env).options.accelerate_train_mode);
    CHECK(npucc::compile_request("m.onnx", "out", {{"accelerate-train-mode", ""}}, env)
              .options.accelerate_train_mode);
    CHECK_FALSE(npucc::compile_request("m.onnx", "out", {{"accelerate-train-mode", "", true}}, env)
                    .options.accelerate_train_mode);
  }

  TEST_CASE(
      "a repeated option keeps every value, in order, and --sample-inputs implies the check") {
    npucc::CompileRequest r = request({{"sample-inputs", "a.npz"}, {"sample-inputs", "b"}});
    CHECK(r.options.sample_inputs == std::vector<fs::path>{"a.npz", "b"});
    CHECK(r.options.check_accuracy);
    CHECK_FALSE(request({}).options.check_accuracy);
    CHECK(request({{"check-accuracy", "true"}}).options.check_accuracy);
    CHECK(usage_line({{"sample-inputs", ""}}) ==
          "--sample-inputs: expected a file or folder, got ''");
    CHECK(usage_line({{"accuracy-target", ""}}).rfind("--accuracy-target: empty clause", 0) == 0);
  }

  TEST_CASE("a later value of a name wins") {
    npucc::CompileRequest r = request({{"target-opset", "18"}, {"target-opset", "21"}});
    CHECK(r.options.target_opset == 21);
  }

  TEST_CASE("bad values get the CLI's messages, naming the option") {
    CHECK(usage_line({{"accelerate-train-mode", "slow|step"}}) ==
          "--accelerate-train-mode: accelerate_train_mode \"slow|step\": TYPE (field 1) is "
          "\"slow\"; allowed: fast, fast1");
    CHECK(usage_line({{"target-opset", "-3"}}) == "--target-opset -3: expected an opset number");
    CHECK(usage_line({{"cache-shared", "foo"}}).rfind("--cache-shared: \"foo\"", 0) == 0);
    CHECK(usage_line({{"force", "maybe"}}) ==
          "--force: \"maybe\" is not a boolean (use true or false (or 1 / 0))");
    CHECK(usage_line({{"keep-dtype", "/nonexistent/keep.txt"}})
              .rfind("--keep-dtype /nonexistent/keep.txt: ", 0) == 0);
    CHECK(usage_line({{"acelerate-train-mode", "fast|step"}}) ==
          "unknown compile option \"acelerate-train-mode\" (did you mean "
          "\"accelerate-train-mode\"?)");
  }

  TEST_CASE("an explicit false overrides the environment") {
    auto env = npucc::test::fake_getenv({{"HOME", "/nonexistent"}, {"NPUCC_CACHE_DISABLE", "1"}});
    CHECK(npucc::compile_request("m.onnx", "out", {}, env).use == npucc::CacheUse::disabled);
    CHECK(npucc::compile_request("m.onnx", "out", {{"no-cache", "false"}}, env).use ==
          npucc::CacheUse::enabled);
  }
}

TEST_SUITE("config::cache_request") {
  TEST_CASE("the cache options of `npucc cache` commands") {
    npucc::CacheRequest r =
        npucc::cache_request({{"cache-dir", "/srv/c"}, {"read-only", "true"}}, k_no_environment);
    CHECK(r.cache.dir == "/srv/c");
    CHECK(r.cache.access == npucc::CacheAccess::read_only);
    CHECK_THROWS_AS(npucc::cache_request({{"no-cache", "true"}}, k_no_environment), npucc::Error);
  }
}
