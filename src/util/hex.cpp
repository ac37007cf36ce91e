#include "util/hex.h"

namespace npucc::util {

namespace {

constexpr const char* k_digits = "0123456789abcdef";

int digit_value(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  return -1;
}

} // namespace

std::string hex_encode(const void* data, size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  std::string out;
  out.reserve(size * 2);
  for (size_t i = 0; i < size; ++i) {
    out += k_digits[bytes[i] >> 4];
    out += k_digits[bytes[i] & 15];
  }
  return out;
}

std::optional<std::string> hex_decode(std::string_view hex) {
  if (hex.size() % 2 != 0) {
    return std::nullopt;
  }
  std::string out;
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    int high = digit_value(hex[i]);
    int low = digit_value(hex[i + 1]);
    if (high < 0 || low < 0) {
      return std::nullopt;
    }
    out += static_cast<char>(high * 16 + low);
  }
  return out;
}

bool is_lower_hex(std::string_view text, size_t digits) {
  if (text.size() != digits) {
    return false;
  }
  for (char c : text) {
    if (digit_value(c) < 0) {
      return false;
    }
  }
  return true;
}

} // namespace npucc::util
