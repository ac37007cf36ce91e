// libFuzzer target: free-text option values through their parsers (see fuzz_inputs.h).
#include "fuzz_inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  npucc::fuzz::feed_options(data, size);
  return 0;
}
