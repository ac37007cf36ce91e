// libFuzzer target: a cache entry's header (entry.npucc) through the entry format's
// parser, with a serialize + parse round trip (see fuzz_inputs.h).
#include "fuzz_inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  npucc::fuzz::feed_cache_entry(data, size);
  return 0;
}
