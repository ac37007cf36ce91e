// libFuzzer target: free-text option values through their parsers: --input-shape,
// --max-memory, accelerate_train_mode, precision_mode(_v2), --modify-mixlist and
// --keep-dtype files, schedule reports, the config file (see fuzz_inputs.h).
#include "fuzz_inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  npucc::fuzz::feed_options(data, size);
  return 0;
}
