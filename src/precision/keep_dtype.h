#pragma once

#include <string>
#include <vector>

namespace npucc::precision {

// A --keep-dtype file: one node name per line; blank lines and lines starting with '#'
// are skipped, surrounding whitespace is trimmed. Returns the names sorted and unique
// (the order of the file does not change the output, so it does not change the cache key).
std::vector<std::string> parse_keep_dtype(const std::string& text);

} // namespace npucc::precision
