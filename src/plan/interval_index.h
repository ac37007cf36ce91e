#pragma once

#include <cstddef>
#include <map>
#include <vector>

namespace npucc::plan {

// Closed intervals [first, last] over steps 0..max_step; finds every stored interval
// that overlaps a query in O(log n + matches), so planning a graph of a million nodes
// stays fast instead of comparing every pair. An interval overlaps [a, b] iff it
// contains a (found by stabbing a segment tree) or starts inside (a, b] (found in a
// map ordered by start); the two cases are disjoint.
class IntervalIndex {
public:
  explicit IntervalIndex(int max_step)
      : m_size(max_step + 1), m_nodes(4 * static_cast<size_t>(m_size)) {}

  void insert(int first, int last, size_t id) {
    insert(1, 0, m_size - 1, first, last, id);
    m_by_first.emplace(first, id);
  }

  template <typename Visit> void overlapping(int first, int last, Visit&& visit) const {
    size_t node = 1;
    int lo = 0;
    int hi = m_size - 1;
    while (true) {
      for (size_t id : m_nodes[node]) {
        visit(id);
      }
      if (lo == hi) {
        break;
      }
      int mid = lo + (hi - lo) / 2;
      if (first <= mid) {
        node = 2 * node;
        hi = mid;
      } else {
        node = 2 * node + 1;
        lo = mid + 1;
      }
    }
    for (auto it = m_by_first.upper_bound(first); it != m_by_first.end() && it->first <= last;
         ++it) {
      visit(it->second);
    }
  }

private:
  void insert(size_t node, int lo, int hi, int first, int last, size_t id) {
    if (last < lo || hi < first) {
      return;
    }
    if (first <= lo && hi <= last) {
      m_nodes[node].push_back(id);
      return;
    }
    int mid = lo + (hi - lo) / 2;
    insert(2 * node, lo, mid, first, last, id);
    insert(2 * node + 1, mid + 1, hi, first, last, id);
  }

  int m_size;
  std::vector<std::vector<size_t>> m_nodes;
  std::multimap<int, size_t> m_by_first;
};

} // namespace npucc::plan
