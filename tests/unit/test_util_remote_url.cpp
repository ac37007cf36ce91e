#include "npucc/error.h"
#include "util/remote_url.h"

#include <doctest/doctest.h>

using npucc::util::check_remote_url;

TEST_SUITE("npucc::util::remote_url") {
  TEST_CASE("remote URLs") {
    CHECK_NOTHROW(check_remote_url("http://127.0.0.1:8080/cache", "--remote-cache"));
    CHECK_NOTHROW(check_remote_url("https://cache.example/npucc/", "--remote-cache"));
    CHECK_NOTHROW(check_remote_url("redis://localhost:6379/2", "--remote-cache"));
    CHECK_NOTHROW(check_remote_url("redis://localhost", "--remote-cache"));
    CHECK_THROWS_AS(check_remote_url("ftp://host/x", "--remote-cache"), npucc::Error);
    CHECK_THROWS_AS(check_remote_url("redis://host:6379/db", "--remote-cache"), npucc::Error);
    CHECK_THROWS_AS(check_remote_url("http://host:99999/", "--remote-cache"), npucc::Error);
    CHECK_THROWS_AS(check_remote_url("http://user:pw@host/", "--remote-cache"), npucc::Error);
    CHECK_THROWS_AS(check_remote_url("cache.example:80", "--remote-cache"), npucc::Error);
  }

  TEST_CASE("a URL's parts") {
    auto url = npucc::util::parse_url("redis://localhost:6380/2");
    CHECK(url.valid);
    CHECK(url.scheme == "redis");
    CHECK(url.host == "localhost");
    CHECK(url.port == 6380);
    CHECK(url.path == "/2");
    CHECK(npucc::util::parse_url("http://host/").port == 0);
    CHECK_FALSE(npucc::util::parse_url("http://:80/").valid);
  }
}
