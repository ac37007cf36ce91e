#include "npucc/cache.h"
#include "npucc/error.h"
#include "test_support.h"

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
}
