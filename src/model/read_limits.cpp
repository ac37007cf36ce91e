#include "npucc/error.h"
#include "npucc/model.h"
#include "util/size.h"

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
  const std::string hint = std::string("expected --max-memory BYTES or a number and a unit (") +
                           util::k_size_units + "), e.g. 8G";
  std::optional<uint64_t> bytes = util::parse_size(text);
  if (!bytes || *bytes == 0) {
    throw usage_error("--max-memory: \"" + text + "\" is not a positive size", hint);
  }
  return *bytes;
}

} // namespace npucc
