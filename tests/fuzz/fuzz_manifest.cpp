// libFuzzer target: a cached manifest.json read back as a cache hit does (see
// fuzz_inputs.h).
#include "fuzz_inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  npucc::fuzz::feed_manifest(data, size);
  return 0;
}
