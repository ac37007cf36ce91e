#pragma once

// Lower-case hexadecimal, the one spelling of digests, keys and MACs in npucc's files.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace npucc::util {

std::string hex_encode(const void* data, size_t size);
inline std::string hex_encode(std::string_view bytes) {
  return hex_encode(bytes.data(), bytes.size());
}

// The bytes `hex` spells; nullopt for an odd length or a character outside 0-9a-f.
std::optional<std::string> hex_decode(std::string_view hex);

// `text` is lower-case hex of exactly `digits` digits (a SHA-256 key: 64).
bool is_lower_hex(std::string_view text, size_t digits);

} // namespace npucc::util
