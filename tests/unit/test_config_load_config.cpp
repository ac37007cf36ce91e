#include "npucc/config.h"
#include "npucc/error.h"
#include "test_support.h"
#include "util/file_io.h"

#include <doctest/doctest.h>
#include <map>

using namespace npucc;
namespace fs = std::filesystem;

namespace {

struct Fixture {
  fs::path home = test::temp_dir("config-home");
  std::map<std::string, std::string> env; // the fake environment: HOME, then what a test adds
  fs::path config_file = home / ".config" / "npucc" / "config.toml";

  Fixture() { env["HOME"] = home.string(); }

  void write_config(const std::string& text) {
    fs::create_directories(config_file.parent_path());
    util::write_file_atomic(config_file, text);
  }

  Config load(std::vector<CommandLineValue> command_line = {}, fs::path options_file = {}) const {
    ConfigSources sources;
    sources.getenv = test::fake_getenv(env);
    sources.command_line = std::move(command_line);
    sources.options_file = std::move(options_file);
    return load_config(sources);
  }

  std::string error(std::vector<CommandLineValue> command_line = {}) const {
    try {
      load(std::move(command_line));
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
};

} // namespace

TEST_SUITE("npucc::load_config") {
  TEST_CASE("built-in defaults") {
    Fixture f;
    Config config = f.load();
    CHECK_FALSE(config.config_file_found);
    CHECK(config.config_file == f.config_file);
    CHECK(config.cache_dir() == f.home / ".cache" / "npucc");
    CHECK(config.cache_dir_is_default());
    CHECK_FALSE(config.cache_max_size());
    CHECK_FALSE(config.cache_disabled());
    CHECK(config.value("color") == "auto");
    CHECK(config.value("cache.link_mode") == "auto");
    CHECK(config.get("precision_mode").source == SettingSource::built_in);
    CHECK_FALSE(config.get("precision_mode").is_set());
    CHECK(config.get("accelerate_train_mode").describe_source() == "default");
    // Every boolean and the remote timeouts have a value to show, not "(unset)".
    for (const auto& info : settings_table()) {
      if (info.kind == SettingKind::boolean) {
        CHECK_MESSAGE(config.value(info.key) == "false", info.key);
      }
    }
    CHECK(config.value("cache.remote_connect_timeout") == "2");
    CHECK(config.value("cache.remote_timeout") == "60");
    CHECK(config.remote_cache().connect_timeout == RemoteCacheConfig{}.connect_timeout);
    CHECK(config.remote_cache().timeout == RemoteCacheConfig{}.timeout);
  }

  TEST_CASE("XDG folders move the config file and the default cache") {
    Fixture f;
    f.env["XDG_CONFIG_HOME"] = (f.home / "xc").string();
    f.env["XDG_CACHE_HOME"] = (f.home / "xk").string();
    Config config = f.load();
    CHECK(config.config_file == f.home / "xc" / "npucc" / "config.toml");
    CHECK(config.cache_dir() == f.home / "xk" / "npucc");
    SUBCASE("a relative XDG path is ignored, as the spec says") {
      f.env["XDG_CACHE_HOME"] = "relative";
      CHECK(f.load().cache_dir() == f.home / ".cache" / "npucc");
    }
  }

  TEST_CASE("precedence: command line > options file > environment > config file > default, "
            "but the environment's cache folder beats the options file's") {
    Fixture f;
    f.write_config(
        "precision_mode = \"force_fp16\"\n[cache]\ndir = \"from-file\"\nmax_size = \"1G\"\n");
    fs::path options = f.home / "opts.json";
    util::write_file_atomic(options, R"({"graph_compiler_cache_dir": "/from/options"})");

    Config config = f.load();
    CHECK(config.get("cache.dir").source == SettingSource::config_file);
    // Relative paths in the config file are taken from its folder.
    CHECK(config.cache_dir() == f.config_file.parent_path() / "from-file");
    CHECK(config.get("cache.dir").origin == f.config_file.string() + ":3");
    CHECK(config.get("cache.dir").describe_source() ==
          "config file (" + f.config_file.string() + ":3)");
    CHECK(config.cache_max_size() == 1u << 30);
    CHECK(config.value("precision_mode") == "force_fp16");

    f.env["NPUCC_CACHE_DIR"] = "/from/env";
    f.env["NPUCC_CACHE_MAX_SIZE"] = "2GiB";
    config = f.load();
    CHECK(config.cache_dir() == "/from/env");
    CHECK(config.get("cache.dir").source == SettingSource::environment);
    CHECK(config.get("cache.dir").origin == "NPUCC_CACHE_DIR");
    CHECK(config.cache_max_size() == 2ull * 1024 * 1024 * 1024);
    CHECK(config.get("precision_mode").source == SettingSource::config_file);

    // But not the cache folder: the environment's wins over an options file's (issue 42), said
    // in a warning; without the variable the options file's is used.
    config = f.load({}, options);
    CHECK(config.cache_dir() == "/from/env");
    CHECK(config.get("cache.dir").source == SettingSource::environment);
    REQUIRE(config.warnings.size() == 1);
    CHECK(config.warnings[0] == options.string() +
                                    ": graph_compiler_cache_dir ignored: NPUCC_CACHE_DIR is set, "
                                    "and the environment chooses the cache folder");
    f.env.erase("NPUCC_CACHE_DIR");
    config = f.load({}, options);
    CHECK(config.cache_dir() == "/from/options");
    CHECK(config.get("cache.dir").source == SettingSource::options_file);
    CHECK(config.get("cache.dir").origin == options.string() + ": graph_compiler_cache_dir");
    CHECK(config.warnings.empty());
    f.env["NPUCC_CACHE_DIR"] = "/from/env";

    config = f.load({{"cache.dir", "/from/cli", "--graph-compiler-cache-dir"}}, options);
    CHECK(config.cache_dir() == "/from/cli");
    CHECK(config.get("cache.dir").describe_source() == "command line (--graph-compiler-cache-dir)");
    CHECK_FALSE(config.cache_dir_is_default());

    SUBCASE("an empty value on a higher layer does not hide a lower one") {
      f.env["NPUCC_CACHE_DIR"] = "";
      config = f.load({{"cache.dir", "", "--cache-dir"}});
      CHECK(config.get("cache.dir").source == SettingSource::config_file);
    }
  }

  TEST_CASE("NO_COLOR turns colour off unless something more specific asks") {
    Fixture f;
    f.write_config("color = \"always\"\n");
    CHECK(f.load().value("color") == "always");
    f.env["NO_COLOR"] = "1";
    CHECK(f.load().value("color") == "never");
    CHECK(f.load().get("color").origin == "NO_COLOR");
    f.env["NPUCC_COLOR"] = "always";
    CHECK(f.load().value("color") == "always");
    CHECK(f.load({{"color", "never", "--color"}}).value("color") == "never");
  }

  TEST_CASE("booleans, sizes and paths are normalised") {
    Fixture f;
    f.write_config("[cache]\ndisable = true\nmax_size = 4096\ndir = \"~/c\"\n");
    Config config = f.load();
    CHECK(config.cache_disabled());
    CHECK(config.cache_max_size() == 4096u);
    CHECK(config.cache_dir() == f.home / "c");
    f.env["NPUCC_CACHE_DISABLE"] = "off";
    CHECK_FALSE(f.load().cache_disabled());
    f.env["NPUCC_CACHE_MAX_SIZE"] = "0";
    CHECK_FALSE(f.load().cache_max_size());
  }

  TEST_CASE("bad values name their source") {
    Fixture f;
    SUBCASE("config file: unknown key with a suggestion and the line") {
      f.write_config("# comment\n[cache]\ndri = \"x\"\n");
      CHECK(f.error() == f.config_file.string() + ":3: unknown setting \"cache.dri\"");
    }
    SUBCASE("config file: wrong type") {
      f.write_config("[cache]\ndisable = \"yes\"\n");
      CHECK(f.error() == f.config_file.string() +
                             ":2: cache.disable must be a boolean (true or false), not a string");
    }
    SUBCASE("config file: bad value") {
      f.write_config("\nprecision_mode = \"allow_fp32_to_fp61\"\n");
      CHECK(f.error().rfind(f.config_file.string() + ":2: ", 0) == 0);
    }
    SUBCASE("config file: syntax") {
      f.write_config("color = never\n");
      CHECK(f.error().rfind(f.config_file.string() + ":1: expected a value", 0) == 0);
    }
    SUBCASE("environment") {
      f.env["NPUCC_CACHE_MAX_SIZE"] = "ten gigs";
      CHECK(f.error() == "NPUCC_CACHE_MAX_SIZE: \"ten gigs\" is not a size");
      f.env["NPUCC_CACHE_MAX_SIZE"] = "10X";
      CHECK(f.error() == "NPUCC_CACHE_MAX_SIZE: \"10X\" is not a size");
    }
    SUBCASE("environment: accelerate_train_mode is checked by its own parser") {
      f.env["NPUCC_ACCELERATE_TRAIN_MODE"] = "fast|stpe";
      CHECK(f.error().rfind("NPUCC_ACCELERATE_TRAIN_MODE: ", 0) == 0);
    }
    SUBCASE("environment: a choice gets a suggestion") {
      f.env["NPUCC_COLOR"] = "alway";
      try {
        f.load();
        FAIL("no error");
      } catch (const Error& e) {
        CHECK(std::string(e.what()) == "NPUCC_COLOR: \"alway\" is not a valid color");
        CHECK(e.hint().find("did you mean \"always\"?") != std::string::npos);
        CHECK(e.status() == ExitStatus::usage);
      }
    }
    SUBCASE("command line") {
      CHECK(f.error({{"cache.disable", "maybe", "--no-cache"}}) ==
            "--no-cache: \"maybe\" is not a boolean");
      CHECK(f.error({{"precision_mode_v2", "fp64", "--precision-mode-v2"}})
                .rfind("--precision-mode-v2: ", 0) == 0);
    }
    SUBCASE("NPUCC_CONFIG naming a missing file") {
      f.env["NPUCC_CONFIG"] = (f.home / "nope.toml").string();
      CHECK(f.error().find("nope.toml, which does not exist") != std::string::npos);
    }
  }

  TEST_CASE("NPUCC_CONFIG picks the file") {
    Fixture f;
    fs::path file = f.home / "elsewhere.toml";
    util::write_file_atomic(file, "modify_mixlist = \"lists/mix.json\"\n");
    f.env["NPUCC_CONFIG"] = file.string();
    Config config = f.load();
    CHECK(config.config_file_found);
    CHECK(config.value("modify_mixlist") == (f.home / "lists" / "mix.json").string());
  }

  TEST_CASE("a bad size names its source and the unit rule") {
    try {
      parse_size_setting("10X", "NPUCC_CACHE_MAX_SIZE");
      FAIL("expected an error");
    } catch (const Error& e) {
      CHECK(std::string(e.what()) == "NPUCC_CACHE_MAX_SIZE: \"10X\" is not a size");
      CHECK(e.hint().find("powers of 1024") != std::string::npos);
    }
    CHECK(parse_size_setting("10G", "x") == uint64_t{10} << 30);
  }

  TEST_CASE("an empty command-line value means the default over every other source") {
    Fixture f;
    f.write_config("precision_mode = \"force_fp16\"\n[cache]\nshared = \"group\"\n");
    f.env["NPUCC_ACCELERATE_TRAIN_MODE"] = "fast|step";
    f.env["NPUCC_CACHE_MAX_SIZE"] = "1G";
    Config config = f.load({{"accelerate_train_mode", "", "--accelerate-train-mode", true},
                            {"precision_mode", "", "--precision-mode", true},
                            {"cache.shared", " ", "--cache-shared", true},
                            {"cache.max_size", "", "--max-size", false}});
    CHECK_FALSE(config.get("accelerate_train_mode").is_set());
    CHECK(config.get("accelerate_train_mode").describe_source() ==
          "command line (--accelerate-train-mode)");
    CHECK_FALSE(config.get("precision_mode").is_set());
    CHECK(config.value("cache.shared") == "auto"); // the built-in default, not unset
    CHECK(config.get("cache.shared").source == SettingSource::command_line);
    CHECK(config.cache_max_size() == uint64_t{1} << 30); // not given: the variable holds
    CHECK(f.error({{"cache.dir", "", "--cache-dir", true}}) ==
          "--cache-dir '': the cache folder is empty");
  }

  TEST_CASE("accelerate_train_mode is not trimmed: the one parser refuses blanks") {
    Fixture f;
    f.env["NPUCC_ACCELERATE_TRAIN_MODE"] = " fast|step";
    CHECK(f.error().find("NPUCC_ACCELERATE_TRAIN_MODE: accelerate_train_mode \" fast|step\"") == 0);
    f.env.erase("NPUCC_ACCELERATE_TRAIN_MODE");
    CHECK(f.error({{"accelerate_train_mode", "fast|step ", "--accelerate-train-mode"}})
              .find("whitespace is not allowed") != std::string::npos);
    // Other settings are trimmed as before.
    CHECK(f.load({{"precision_mode", " force_fp16 ", "--precision-mode"}}).value("precision_mode") ==
          "force_fp16");
  }
}
