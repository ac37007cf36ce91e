// Fuzzes the option parsers that take free text from users and config files.
#include "npucc/compile.h"
#include "npucc/error.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    npucc::parse_input_shapes(text);
  } catch (const npucc::Error&) {
  }
  return 0;
}
