#include "config/options_file.h"
#include "npucc/config.h"
#include "npucc/error.h"
#include "test_support.h"
#include "util/file_io.h"

#include <doctest/doctest.h>

using namespace npucc;
namespace fs = std::filesystem;

namespace {

fs::path write_options(const std::string& text) {
  fs::path file = test::temp_dir("options") / "npu_options.json";
  util::write_file_atomic(file, text);
  return file;
}

Config load_with(const fs::path& options) {
  fs::path home = options.parent_path();
  ConfigSources sources;
  sources.options_file = options;
  sources.getenv = [home](const std::string& name) -> std::optional<std::string> {
    if (name == "HOME") {
      return home.string();
    }
    return std::nullopt;
  };
  return load_config(sources);
}

Error error_of(const std::string& text) {
  try {
    config::read_options_file(write_options(text));
  } catch (const Error& e) {
    return e;
  }
  return Error("");
}

} // namespace

TEST_SUITE("npucc::config::read_options_file") {
  TEST_CASE("Ascend keys map to settings; paths are taken from the file's folder") {
    fs::path file = write_options(R"({
      "graph_compiler_cache_dir": "cache",
      "accelerate_train_mode": "fast|loss|1.1",
      "precision_mode": "allow_fp32_to_fp16",
      "modify_mixlist": "lists/ops.json"
    })");
    Config config = load_with(file);
    CHECK(config.cache_dir() == file.parent_path() / "cache");
    CHECK(config.value("accelerate_train_mode") == "fast|loss|1.1");
    CHECK(config.value("precision_mode") == "allow_fp32_to_fp16");
    CHECK(config.value("modify_mixlist") == (file.parent_path() / "lists" / "ops.json").string());
    CHECK(config.get("modify_mixlist").source == SettingSource::options_file);
    CHECK(config.get("modify_mixlist").origin == file.string() + ": modify_mixlist");
    CHECK(config.warnings.empty());
  }

  TEST_CASE("a file the options file names stays inside its folder (issue 30)") {
    for (const char* outside : {"../lists/ops.json", "/etc/hostname"}) {
      CAPTURE(outside);
      fs::path file =
          write_options(std::string(R"({"modify_mixlist": ")") + outside + R"("})");
      CHECK_THROWS_WITH_AS(load_with(file), doctest::Contains("is not inside"), npucc::Error);
    }
  }

  TEST_CASE("empty strings are Ascend's 'not set'") {
    fs::path file = write_options(R"({"precision_mode": "", "precision_mode_v2": "origin"})");
    Config config = load_with(file);
    CHECK_FALSE(config.get("precision_mode").is_set());
    CHECK(config.value("precision_mode_v2") == "origin");
  }

  TEST_CASE("known Ascend options npucc does not use are warnings") {
    auto result = config::read_options_file(write_options(
        R"({"iterations_per_loop": 10, "op_compiler_cache_mode": "enable", "op_debug_level": ""})"));
    CHECK(result.values.empty());
    REQUIRE(result.warnings.size() == 2);
    CHECK(
        result.warnings[0].find("iterations_per_loop (10) does not apply to an offline compile") !=
        std::string::npos);
    CHECK(result.warnings[1].find("op_compiler_cache_mode (enable)") != std::string::npos);
  }

  TEST_CASE("unknown keys are errors with a suggestion") {
    Error e = error_of(R"({"graph_compiler_cahce_dir": "x"})");
    CHECK(std::string(e.what()).find(": unknown option \"graph_compiler_cahce_dir\"") !=
          std::string::npos);
    CHECK(e.hint() == "did you mean \"graph_compiler_cache_dir\"?");
    CHECK(e.status() == ExitStatus::usage);
    Error far = error_of(R"({"zzzzzzzzzzzz": "x"})");
    CHECK(far.hint().rfind("npucc reads: ", 0) == 0);
    CHECK(far.hint().find("graph_compiler_cache_dir") != std::string::npos);
  }

  TEST_CASE("malformed files") {
    CHECK(std::string(error_of("{\"precision_mode\": \n  oops}").what())
              .find("not valid JSON: line 2") != std::string::npos);
    CHECK(std::string(error_of("[1, 2]").what()).find("must be a JSON object, not array") !=
          std::string::npos);
    CHECK(std::string(error_of(R"({"precision_mode": 3})").what())
              .find("precision_mode must be a string, not number") != std::string::npos);
    CHECK_THROWS_AS(config::read_options_file("/nonexistent/npucc/options.json"), Error);
  }

  TEST_CASE("values are validated, naming the file and key") {
    fs::path file = write_options(R"({"accelerate_train_mode": "fast|step|2.0"})");
    try {
      load_with(file);
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(std::string(e.what()).rfind(file.string() + ": accelerate_train_mode: ", 0) == 0);
    }
  }
}
