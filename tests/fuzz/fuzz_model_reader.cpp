// libFuzzer target: a model file's bytes through the reader, checker, shape
// inference, passes and memory plan (see fuzz_inputs.h), mutated structurally
// (model_mutator.h).
#include "fuzz_inputs.h"
#include "model_mutator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  npucc::fuzz::feed_model_reader(data, size);
  return 0;
}
