#include "model/tensor_info.h"
#include "npucc/error.h"
#include "npucc/model.h"
#include "util/strings.h"

#include <unistd.h>

namespace npucc {

uint64_t default_max_memory_bytes() {
  long pages = ::sysconf(_SC_PHYS_PAGES);
  long page_size = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) {
    return uint64_t{4} << 30;
  }
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size) / 4;
}

uint64_t parse_memory_size(const std::string& text) {
  const std::string hint =
      "expected --max-memory BYTES with an optional K, M, G or T suffix (powers "
      "of 1024), e.g. 8G";
  std::string_view number = util::trim(text);
  uint64_t scale = 1;
  if (!number.empty()) {
    switch (number.back()) {
    case 'K':
    case 'k':
      scale = uint64_t{1} << 10;
      break;
    case 'M':
    case 'm':
      scale = uint64_t{1} << 20;
      break;
    case 'G':
    case 'g':
      scale = uint64_t{1} << 30;
      break;
    case 'T':
    case 't':
      scale = uint64_t{1} << 40;
      break;
    default:
      break;
    }
    if (scale != 1) {
      number.remove_suffix(1);
    }
  }
  int64_t value = 0;
  if (!util::parse_int64(number, value) || value <= 0) {
    throw usage_error("--max-memory: \"" + text + "\" is not a positive size", hint);
  }
  auto bytes = model::checked_mul(static_cast<uint64_t>(value), scale);
  if (!bytes) {
    throw usage_error("--max-memory: \"" + text + "\" is too large", hint);
  }
  return *bytes;
}

} // namespace npucc
