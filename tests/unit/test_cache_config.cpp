#include "npucc/cache.h"
#include "npucc/error.h"
#include "test_support.h"
#include "util/file_io.h"

#include <cstdlib>
#include <doctest/doctest.h>
#include <map>

namespace fs = std::filesystem;

namespace {

// The cache settings of a command line that gives `dir_option` (or none), in an
// environment of `env` alone (HOME is a fresh folder unless `env` sets it).
npucc::CacheConfig cache_config(std::map<std::string, std::string> env,
                                const std::string& dir_option = "") {
  env.emplace("HOME", npucc::test::temp_dir("home").string());
  npucc::ConfigSources sources;
  sources.getenv = npucc::test::fake_getenv(env);
  sources.command_line = {{"cache.dir", dir_option, "--cache-dir"}};
  return npucc::resolve_cache_config(npucc::load_config(sources));
}

npucc::CacheConfig explicit_dir(const fs::path& dir) {
  return cache_config({}, dir.string());
}

} // namespace

TEST_SUITE("npucc::CacheConfig") {
  TEST_CASE("ages") {
    CHECK(npucc::parse_age("7d") == 7 * 86400);
    CHECK(npucc::parse_age("30m") == 1800);
    CHECK_THROWS_AS(npucc::parse_age("7"), npucc::Error);
    CHECK_THROWS_AS(npucc::parse_age("d"), npucc::Error);
  }

  TEST_CASE("the option wins over the environment, which wins over XDG") {
    fs::path base = npucc::test::temp_dir("xdg");
    auto config = cache_config({{"XDG_CACHE_HOME", base.string()}});
    CHECK(config.dir == base / "npucc");
    CHECK(config.dir_source == npucc::SettingSource::built_in);
    CHECK(config.dir_origin.empty());
    auto from_env =
        cache_config({{"XDG_CACHE_HOME", base.string()}, {"NPUCC_CACHE_DIR", "/env/dir"}});
    CHECK(from_env.dir == "/env/dir");
    CHECK(from_env.dir_origin == "NPUCC_CACHE_DIR");
    auto from_option = cache_config({{"NPUCC_CACHE_DIR", "/env/dir"}}, "/opt/dir");
    CHECK(from_option.dir == "/opt/dir");
    CHECK(from_option.dir_source == npucc::SettingSource::command_line);
    CHECK(from_option.dir_origin == "--cache-dir");

    // The default folder is created on first use, with a CACHEDIR.TAG.
    fs::path opened = npucc::open_cache_dir(config);
    CHECK(fs::exists(opened / "CACHEDIR.TAG"));
  }

  TEST_CASE("an explicit folder that does not exist is an error naming it and the fix") {
    fs::path missing = npucc::test::temp_dir("x") / "nope";
    auto config = explicit_dir(missing);
    try {
      npucc::open_cache_dir(config);
      FAIL("expected an error");
    } catch (const npucc::Error& e) {
      CHECK(std::string(e.what()).find(missing.string()) != std::string::npos);
      CHECK(e.hint().find("npucc cache init") != std::string::npos);
    }
    CHECK_FALSE(fs::exists(missing));
    npucc::init_cache_dir(missing);
    CHECK(npucc::open_cache_dir(config) == fs::canonical(missing));
  }

  TEST_CASE("an explicit empty folder becomes a cache on a compile, and only then") {
    fs::path dir = npucc::test::temp_dir("seed") / "build_cache_dir";
    fs::create_directories(dir);
    auto config = explicit_dir(dir);
    for (auto intent : {npucc::CacheIntent::read, npucc::CacheIntent::modify}) {
      CHECK_THROWS_WITH_AS(npucc::open_cache_dir(config, intent),
                           doctest::Contains("not an npucc cache yet"), npucc::Error);
      CHECK(fs::is_empty(dir));
    }
    CHECK(npucc::open_cache_dir(config, npucc::CacheIntent::compile) == fs::canonical(dir));
    CHECK(npucc::is_npucc_cache(dir));
  }

  TEST_CASE("a folder that is not an npucc cache is refused and left as it was") {
    fs::path dir = npucc::test::temp_dir("foreign") / "home";
    fs::create_directories(dir / "docs");
    npucc::util::write_file_atomic(dir / "docs" / "a.txt", "precious");
    CHECK_FALSE(npucc::is_npucc_cache(dir));
    auto config = explicit_dir(dir);
    const std::string want = "not an npucc cache: " + dir.string() + " (it is not empty";
    for (auto intent :
         {npucc::CacheIntent::read, npucc::CacheIntent::modify, npucc::CacheIntent::compile}) {
      CHECK_THROWS_WITH_AS(npucc::open_cache_dir(config, intent), doctest::Contains(want.c_str()),
                           npucc::Error);
    }
    CHECK_THROWS_WITH_AS(npucc::init_cache_dir(dir), doctest::Contains("it is not empty"),
                         npucc::Error);
    std::vector<fs::path> names;
    for (const auto& entry : fs::directory_iterator(dir)) {
      names.push_back(entry.path().filename());
    }
    CHECK(names == std::vector<fs::path>{"docs"});
  }

  TEST_CASE("another tool's CACHEDIR.TAG is not npucc's; an earlier npucc's is") {
    fs::path dir = npucc::test::temp_dir("tags");
    fs::create_directories(dir / "entries");
    npucc::util::write_file_atomic(dir / "CACHEDIR.TAG",
                                   "Signature: 8a477f597d28d172789f06886806bc55\n# ccache\n");
    CHECK_FALSE(npucc::is_npucc_cache(dir));
    npucc::util::write_file_atomic(
        dir / "CACHEDIR.TAG",
        "Signature: 8a477f597d28d172789f06886806bc55\n"
        "# This file is a cache directory tag created by npucc.\n"
        "# For information about cache directory tags see https://bford.info/cachedir/\n");
    CHECK(npucc::is_npucc_cache(dir));
    fs::remove(dir / "entries");
    CHECK_FALSE(npucc::is_npucc_cache(dir)); // the layout is part of the mark
  }

  TEST_CASE("only a compile creates the default folder, and only an empty one") {
    fs::path base = npucc::test::temp_dir("xdg2");
    auto config = cache_config({{"XDG_CACHE_HOME", base.string()}});
    CHECK_THROWS_AS(npucc::open_cache_dir(config, npucc::CacheIntent::read), npucc::Error);
    CHECK_THROWS_AS(npucc::open_cache_dir(config, npucc::CacheIntent::modify), npucc::Error);
    CHECK_FALSE(fs::exists(base / "npucc"));
    fs::create_directories(base / "npucc");
    npucc::util::write_file_atomic(base / "npucc" / "mine", "x");
    CHECK_THROWS_AS(npucc::open_cache_dir(config, npucc::CacheIntent::compile), npucc::Error);
    fs::remove(base / "npucc" / "mine");
    CHECK(npucc::is_npucc_cache(npucc::open_cache_dir(config, npucc::CacheIntent::compile)));
  }

  TEST_CASE("a missing folder is blamed on the source that named it") {
    fs::path home = npucc::test::temp_dir("blame");
    fs::path config_file = home / "config.toml";
    npucc::util::write_file_atomic(config_file, "# npucc\n[cache]\ndir = \"nope\"\n");
    std::map<std::string, std::string> env = {{"HOME", home.string()},
                                              {"NPUCC_CONFIG", config_file.string()}};
    auto message = [](const npucc::CacheConfig& config) {
      try {
        npucc::open_cache_dir(config);
      } catch (const npucc::Error& e) {
        return std::string(e.what());
      }
      return std::string("no error");
    };
    auto from_file = cache_config(env);
    CHECK(from_file.dir_source == npucc::SettingSource::config_file);
    CHECK(message(from_file) == (home / "nope").string() + ": the cache folder (" +
                                    config_file.string() + ":3) does not exist");
    env["NPUCC_CACHE_DIR"] = (home / "gone").string();
    CHECK(message(cache_config(env)) ==
          (home / "gone").string() + ": the cache folder (NPUCC_CACHE_DIR) does not exist");
    CHECK(message(cache_config(env, (home / "typed").string())) ==
          (home / "typed").string() + ": the cache folder (--cache-dir) does not exist");
    CHECK_FALSE(fs::exists(home / "nope"));
  }

  TEST_CASE("every cache setting reaches the CacheConfig, from whichever source") {
    fs::path home = npucc::test::temp_dir("all-settings");
    fs::path config_file = home / "config.toml";
    npucc::util::write_file_atomic(config_file, "[cache]\nmax_size = \"2G\"\nshared = \"group\"\n"
                                                "remote = \"redis://localhost:6379/1\"\n"
                                                "[remote]\ntoken_file = \"token\"\n");
    std::map<std::string, std::string> env = {{"HOME", home.string()},
                                              {"NPUCC_CONFIG", config_file.string()},
                                              {"NPUCC_CACHE_READ_ONLY", "yes"},
                                              {"NPUCC_REMOTE_CACHE_TIMEOUT", "0.5"},
                                              {"NPUCC_CACHE_KEY_FILE", "/keys/k"}};
    auto config = cache_config(env);
    CHECK(config.max_size == uint64_t{2} << 30);
    CHECK(config.sharing == npucc::CacheSharing::group);
    CHECK(config.access == npucc::CacheAccess::read_only);
    CHECK(config.key_file == "/keys/k");
    CHECK_FALSE(config.disabled);
    CHECK(config.remote.url == "redis://localhost:6379/1");
    CHECK(config.remote.token_file == home / "token"); // relative: from the file's folder
    CHECK(config.remote.timeout == 0.5);
    CHECK(config.remote.connect_timeout == 2.0);
    CHECK_FALSE(config.remote.read_only);
  }
}
