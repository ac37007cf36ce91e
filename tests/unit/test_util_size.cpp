#include "util/size.h"

#include <doctest/doctest.h>

using npucc::util::parse_size;

TEST_SUITE("npucc::util::size") {
  TEST_CASE("K, M, G, T alone or with iB are powers of 1024") {
    CHECK(parse_size("4096") == 4096u);
    CHECK(parse_size("4096B") == 4096u);
    CHECK(parse_size("2k") == 2048u);
    CHECK(parse_size("8G") == uint64_t{8} << 30);
    CHECK(parse_size("8g") == uint64_t{8} << 30);
    CHECK(parse_size("8Gi") == uint64_t{8} << 30);
    CHECK(parse_size("512 MiB") == uint64_t{512} << 20);
    CHECK(parse_size(" 512m ") == uint64_t{512} << 20);
    CHECK(parse_size("1T") == uint64_t{1} << 40);
    CHECK(parse_size("1.5GiB") == 1610612736u);
    CHECK(parse_size("0.5K") == 512u);
    CHECK(parse_size("0") == 0u);
  }

  TEST_CASE("KB, MB, GB, TB are powers of 1000") {
    CHECK(parse_size("10GB") == 10'000'000'000u);
    CHECK(parse_size("10gb") == 10'000'000'000u);
    CHECK(parse_size("2kB") == 2000u);
    CHECK(parse_size("1.5MB") == 1'500'000u);
    CHECK(parse_size("1TB") == 1'000'000'000'000u);
  }

  TEST_CASE("the largest sizes and what does not fit") {
    CHECK(parse_size("18446744073709551615") == UINT64_MAX);
    CHECK_FALSE(parse_size("18446744073709551616"));
    CHECK(parse_size("16777215T") == uint64_t{16777215} << 40);
    CHECK_FALSE(parse_size("16777216T"));
    CHECK_FALSE(parse_size("99999999T"));
    CHECK_FALSE(parse_size("99999999999T"));
  }

  TEST_CASE("anything else is not a size") {
    for (const char* bad : {"", " ", "G", "10X", "1e30T", "5P", "-1G", "+1G", "1.2.3G", "1.5",
                            "1.5B", "ten gigs", "8 G B", "8GiBs", "0x10", "8Kb2"}) {
      CAPTURE(bad);
      CHECK_FALSE(parse_size(bad));
    }
  }
}
