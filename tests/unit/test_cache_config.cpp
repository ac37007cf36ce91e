#include "npucc/cache.h"
#include "npucc/error.h"
#include "test_support.h"
#include "util/file_io.h"

#include <cstdlib>
#include <doctest/doctest.h>

namespace fs = std::filesystem;

TEST_SUITE("npucc::CacheConfig") {
  TEST_CASE("ages") {
    CHECK(npucc::parse_age("7d") == 7 * 86400);
    CHECK(npucc::parse_age("30m") == 1800);
    CHECK_THROWS_AS(npucc::parse_age("7"), npucc::Error);
    CHECK_THROWS_AS(npucc::parse_age("d"), npucc::Error);
  }

  TEST_CASE("the option wins over the environment, which wins over XDG") {
    fs::path base = npucc::test::temp_dir("xdg");
    ::setenv("XDG_CACHE_HOME", base.c_str(), 1);
    ::unsetenv("NPUCC_CACHE_DIR");
    auto config = npucc::resolve_cache_config("", "");
    CHECK(config.dir == base / "npucc");
    CHECK(config.source == npucc::CacheDirSource::default_location);
    ::setenv("NPUCC_CACHE_DIR", "/env/dir", 1);
    CHECK(npucc::resolve_cache_config("", "").dir == "/env/dir");
    CHECK(npucc::resolve_cache_config("/opt/dir", "1G").dir == "/opt/dir");
    CHECK(*npucc::resolve_cache_config("/opt/dir", "1G").max_size == 1'000'000'000ULL);
    ::unsetenv("NPUCC_CACHE_DIR");

    // The default folder is created on first use, with a CACHEDIR.TAG.
    fs::path opened = npucc::open_cache_dir(config);
    CHECK(fs::exists(opened / "CACHEDIR.TAG"));
    ::unsetenv("XDG_CACHE_HOME");
  }

  TEST_CASE("an explicit folder that does not exist is an error naming it and the fix") {
    fs::path missing = npucc::test::temp_dir("x") / "nope";
    auto config = npucc::resolve_cache_config(missing.string(), "");
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

  TEST_CASE("a folder that is not an npucc cache is refused and left as it was") {
    fs::path dir = npucc::test::temp_dir("foreign") / "home";
    fs::create_directories(dir / "docs");
    npucc::util::write_file_atomic(dir / "docs" / "a.txt", "precious");
    CHECK_FALSE(npucc::is_npucc_cache(dir));
    auto config = npucc::resolve_cache_config(dir.string(), "");
    const std::string want =
        "not an npucc cache: " + dir.string() + " (run npucc cache init " + dir.string() + ")";
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
    ::setenv("XDG_CACHE_HOME", base.c_str(), 1);
    ::unsetenv("NPUCC_CACHE_DIR");
    auto config = npucc::resolve_cache_config("", "");
    CHECK_THROWS_AS(npucc::open_cache_dir(config, npucc::CacheIntent::read), npucc::Error);
    CHECK_THROWS_AS(npucc::open_cache_dir(config, npucc::CacheIntent::modify), npucc::Error);
    CHECK_FALSE(fs::exists(base / "npucc"));
    fs::create_directories(base / "npucc");
    npucc::util::write_file_atomic(base / "npucc" / "mine", "x");
    CHECK_THROWS_AS(npucc::open_cache_dir(config, npucc::CacheIntent::compile), npucc::Error);
    fs::remove(base / "npucc" / "mine");
    CHECK(npucc::is_npucc_cache(npucc::open_cache_dir(config, npucc::CacheIntent::compile)));
    ::unsetenv("XDG_CACHE_HOME");
  }
}
