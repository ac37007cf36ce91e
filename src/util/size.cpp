#include "util/size.h"

#include "util/strings.h"

#include <cmath>
#include <string>

namespace npucc::util {

const char* const k_size_units = "K, M, G, T: powers of 1024; KB, MB, GB, TB: powers of 1000";

namespace {

// The multiplier of a unit (already lower case), 0 for an unknown one.
uint64_t unit_scale(const std::string& unit) {
  if (unit.empty() || unit == "b") {
    return 1;
  }
  const std::string prefixes = "kmgt";
  size_t power = prefixes.find(unit[0]);
  std::string rest = unit.substr(1);
  if (power == std::string::npos || !(rest.empty() || rest == "i" || rest == "ib" || rest == "b")) {
    return 0;
  }
  uint64_t base = rest == "b" ? 1000 : 1024;
  uint64_t scale = 1;
  for (size_t i = 0; i <= power; ++i) {
    scale *= base;
  }
  return scale;
}

} // namespace

std::optional<uint64_t> parse_size(std::string_view text) {
  std::string_view trimmed = trim(text);
  size_t digits = 0;
  while (digits < trimmed.size() && trimmed[digits] >= '0' && trimmed[digits] <= '9') {
    ++digits;
  }
  size_t end = digits;
  if (end < trimmed.size() && trimmed[end] == '.') {
    ++end;
    while (end < trimmed.size() && trimmed[end] >= '0' && trimmed[end] <= '9') {
      ++end;
    }
  }
  std::string_view whole = trimmed.substr(0, digits);
  std::string_view fraction = trimmed.substr(digits, end - digits); // "" or ".5"
  uint64_t scale = unit_scale(ascii_lower(std::string(trim(trimmed.substr(end)))));
  if (whole.empty() || scale == 0 || (scale == 1 && !fraction.empty())) {
    return std::nullopt; // no number, an unknown unit, or fractional bytes
  }
  uint64_t bytes = 0;
  for (char digit : whole) {
    uint64_t value = static_cast<uint64_t>(digit - '0');
    if (bytes > (UINT64_MAX - value) / 10) {
      return std::nullopt;
    }
    bytes = bytes * 10 + value;
  }
  if (bytes > UINT64_MAX / scale) {
    return std::nullopt;
  }
  bytes *= scale;
  if (fraction.size() > 1) {
    double part = std::stod("0" + std::string(fraction)) * static_cast<double>(scale);
    auto extra = static_cast<uint64_t>(std::floor(part));
    if (bytes > UINT64_MAX - extra) {
      return std::nullopt;
    }
    bytes += extra;
  }
  return bytes;
}

} // namespace npucc::util
