#pragma once

#include "cache/entry_format.h"
#include "npucc/version.h"

#include <string>

namespace npucc::test {

// An entry header as a compile of model "m" into one float32 graph would store it.
inline cache::EntryHeader entry_header(const std::string& key,
                                       const std::string& version = npucc::k_version,
                                       const std::string& model = "m") {
  cache::EntryHeader header;
  header.compiler_version = version;
  header.key = key;
  header.model = model;
  header.variants = "high:float32";
  return header;
}

} // namespace npucc::test
