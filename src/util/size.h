#pragma once

// The one rule for sizes, wherever npucc reads one (--max-size, --max-memory,
// cache.max_size, NPUCC_CACHE_MAX_SIZE, `cache clean --max-size`):
//
//   4096          bytes (a whole number; a trailing "B" is allowed)
//   8K 8M 8G 8T   powers of 1024, as --max-memory always read them: 8G = 8 GiB
//   8KiB ... 8Ti  the same, spelt out
//   8KB ... 8TB   powers of 1000 (SI): 8GB = 8,000,000,000 bytes
//
// Letters in any case, blanks allowed between the number and its unit, a fraction
// allowed with a unit ("1.5G"); fractional bytes round down.

#include <cstdint>
#include <optional>
#include <string_view>

namespace npucc::util {

// For hints: "K, M, G, T: powers of 1024; KB, MB, GB, TB: powers of 1000".
extern const char* const k_size_units;

// The number of bytes `text` names; nullopt when it is not a size or does not fit in 64 bits.
std::optional<uint64_t> parse_size(std::string_view text);

} // namespace npucc::util
