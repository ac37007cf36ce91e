#include "model/varint_ends.h"

#include "util/parallel.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace npucc::model {

namespace {

constexpr uint64_t k_part_chunk_bytes = 1 << 20;
constexpr uint64_t k_max_continuations = 9; // a varint takes ten bytes at most
constexpr uint64_t k_min_part_bytes = 4 << 20;

// One part's ends, and its runs of continuation bytes at either edge.
struct Part {
  uint64_t ends = 0;
  uint64_t leading = 0;  // before its first end (all of it when it has none)
  uint64_t trailing = 0; // after its last end
  bool has_end = false;
  bool bad = false; // a read failed, or a run inside it is too long
};

// Ends one run of continuation bytes at an end byte.
void close_run(Part& part, uint64_t run) {
  if (!part.has_end) {
    part.leading = run;
    part.has_end = true;
  }
  part.bad = part.bad || run > k_max_continuations;
}

// Counts a chunk a word at a time: each word's end bytes are counted at once, and `run`
// carries the continuation bytes since the last end.
void count_chunk(const char* bytes, size_t size, Part& part, uint64_t& run) {
  constexpr uint64_t k_high_bits = 0x8080808080808080ull;
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t word = 0;
    std::memcpy(&word, bytes + i, sizeof(word));
    const uint64_t ends = ~wire_word(word) & k_high_bits; // bit 8k+7: byte k ends a value
    if (ends == 0) {
      run += 8;
      continue;
    }
    close_run(part, run + static_cast<uint64_t>(__builtin_ctzll(ends)) / 8);
    // Bits only at 8k+7: a multiply sums them (no POPCNT on baseline x86-64).
    part.ends += ((ends >> 7) * 0x0101010101010101ull) >> 56;
    run = static_cast<uint64_t>(__builtin_clzll(ends)) / 8; // the bytes after its last end
  }
  for (; i < size; ++i) {
    if ((static_cast<uint8_t>(bytes[i]) & 0x80) != 0) {
      ++run;
      continue;
    }
    close_run(part, run);
    ++part.ends;
    run = 0;
  }
}

Part count_part(WireSource& file, uint64_t begin, uint64_t end) {
  Part part;
  uint64_t run = 0;
  std::string chunk;
  for (uint64_t pos = begin; pos < end && !part.bad; pos += chunk.size()) {
    chunk.clear();
    if (!file.append(pos, std::min(k_part_chunk_bytes, end - pos), chunk)) {
      part.bad = true;
      break;
    }
    count_chunk(chunk.data(), chunk.size(), part, run);
  }
  if (!part.has_end) {
    part.leading = run;
  }
  part.trailing = run;
  part.bad = part.bad || run > k_max_continuations;
  return part;
}

} // namespace

std::optional<uint64_t> count_packed_varints(WireSource& file, uint64_t begin, uint64_t end) {
  const uint64_t length = end - begin;
  const size_t count = static_cast<size_t>(
      std::clamp<uint64_t>(length / k_min_part_bytes, 1, std::max(1u, util::thread_budget())));
  std::vector<Part> parts(count);
  // pread() only: the parts share the file safely.
  util::parallel_for(count, [&](size_t i) {
    parts[i] = count_part(file, begin + length * i / count, begin + length * (i + 1) / count);
  });
  uint64_t values = 0;
  uint64_t carried = 0; // continuation bytes running into this part from the ones before
  for (const Part& part : parts) {
    if (part.bad || carried + part.leading > k_max_continuations) {
      return std::nullopt;
    }
    values += part.ends;
    carried = part.has_end ? part.trailing : carried + part.leading;
  }
  if (carried != 0) {
    return std::nullopt; // the field ends inside a varint
  }
  return values;
}

} // namespace npucc::model
