#include "plan/interval_index.h"

#include <algorithm>
#include <doctest/doctest.h>
#include <random>
#include <set>

TEST_SUITE("npucc::plan::IntervalIndex") {
  TEST_CASE("finds exactly the overlapping intervals (against brute force)") {
    std::mt19937 rng(7);
    const int max_step = 200;
    std::uniform_int_distribution<int> step(0, max_step);
    npucc::plan::IntervalIndex index(max_step);
    std::vector<std::pair<int, int>> stored;
    for (size_t id = 0; id < 400; ++id) {
      int a = step(rng);
      int b = std::min(max_step, a + step(rng) % 20);
      index.insert(a, b, id);
      stored.emplace_back(a, b);
      int qa = step(rng);
      int qb = std::min(max_step, qa + step(rng) % 30);
      std::multiset<size_t> found;
      index.overlapping(qa, qb, [&](size_t hit) { found.insert(hit); });
      std::multiset<size_t> expected;
      for (size_t other = 0; other < stored.size(); ++other) {
        if (stored[other].first <= qb && qa <= stored[other].second) {
          expected.insert(other);
        }
      }
      REQUIRE(found == expected);
    }
  }

  TEST_CASE("handles intervals reaching the last step") {
    npucc::plan::IntervalIndex index(3);
    index.insert(0, 3, 0);
    index.insert(3, 3, 1);
    std::vector<size_t> found;
    index.overlapping(3, 3, [&](size_t hit) { found.push_back(hit); });
    std::sort(found.begin(), found.end());
    CHECK(found == std::vector<size_t>{0, 1});
  }
}
