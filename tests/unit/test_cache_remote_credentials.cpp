#include "cache/remote/credentials.h"
#include "npucc/error.h"
#include "test_support.h"
#include "util/file_io.h"

#include <doctest/doctest.h>

namespace fs = std::filesystem;
using npucc::cache::remote::load_credentials;

TEST_SUITE("npucc::cache::remote::credentials") {
  TEST_CASE("the first line of each file, never the contents in an error") {
    fs::path dir = npucc::test::temp_dir("creds");
    npucc::util::write_file_atomic(dir / "token", "s3cret-token\r\nignored\n");
    npucc::util::write_file_atomic(dir / "creds", "alice:pa:ss\n");
    npucc::util::write_file_atomic(dir / "bad", "no-colon-s3cret\n");
    npucc::RemoteCacheConfig config;
    config.token_file = dir / "token";
    config.credentials_file = dir / "creds";
    auto credentials = load_credentials(config);
    CHECK(credentials.token == "s3cret-token");
    CHECK(credentials.user == "alice");
    CHECK(credentials.password == "pa:ss");
    config.credentials_file = dir / "bad";
    try {
      load_credentials(config);
      FAIL("expected an error");
    } catch (const npucc::Error& e) {
      CHECK(std::string(e.what()).find("not USER:PASSWORD") != std::string::npos);
      CHECK(std::string(e.what()).find("s3cret") == std::string::npos);
    }
    config.credentials_file = dir / "missing";
    CHECK_THROWS_WITH_AS(load_credentials(config), doctest::Contains("cannot be read"),
                         npucc::Error);
    CHECK(load_credentials(npucc::RemoteCacheConfig{}).empty());
  }
}
