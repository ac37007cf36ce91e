#include "model/varint_ends.h"

#include "util/parallel.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

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

// Whether the 64 continuation bits of `block` (bit k: byte k) hold ten in a row: a varint
// longer than ten bytes. A run that reaches the block's last bit is carried instead.
bool ten_in_a_row(uint64_t block) {
  const uint64_t two = block & (block >> 1);
  const uint64_t four = two & (two >> 2);
  const uint64_t eight = four & (four >> 4);
  return (eight & (two >> 8)) != 0;
}

// The set bits of `bits`, in a few shifts and one multiply: baseline x86-64 has no POPCNT,
// and __builtin_popcountll became a libgcc call (1.5% of an int64_data compile's CPU).
uint64_t bits_set(uint64_t bits) {
  bits -= (bits >> 1) & 0x5555555555555555ull;
  bits = (bits & 0x3333333333333333ull) + ((bits >> 2) & 0x3333333333333333ull);
  bits = (bits + (bits >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return (bits * 0x0101010101010101ull) >> 56;
}

// Adds one block of 64 bytes, given its continuation bits (bit k: byte k continues).
void count_block(uint64_t continues, Part& part, uint64_t& run) {
  const uint64_t ends = ~continues;
  if (ends == 0) {
    run += 64;
    return;
  }
  close_run(part, run + static_cast<uint64_t>(__builtin_ctzll(ends)));
  part.ends += bits_set(ends);
  part.bad = part.bad || ten_in_a_row(continues);
  run = static_cast<uint64_t>(__builtin_clzll(ends)); // the bytes after its last end
}

#ifdef __SSE2__
// The high bits of 64 bytes, bit k for byte k (SSE2 is every x86-64's: four movemasks).
uint64_t high_bits(const char* bytes) {
  uint64_t bits = 0;
  for (int i = 0; i < 4; ++i) {
    const __m128i lanes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + 16 * i));
    bits |= static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(lanes))) << (16 * i);
  }
  return bits;
}
#endif

// Counts a chunk 64 bytes at a time where SSE2 gives each byte's high bit at once (the
// count of a 200 MB int64_data field was a tenth of its compile's CPU a word at a time),
// else a word at a time: each word's end bytes are counted at once. `run` carries the
// continuation bytes since the last end.
void count_chunk(const char* bytes, size_t size, Part& part, uint64_t& run) {
  constexpr uint64_t k_high_bits = 0x8080808080808080ull;
  size_t i = 0;
#ifdef __SSE2__
  for (; i + 64 <= size; i += 64) {
    count_block(high_bits(bytes + i), part, run);
  }
#endif
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
