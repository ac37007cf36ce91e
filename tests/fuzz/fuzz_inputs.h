#pragma once
// What each fuzz target does with one input, shared with the regression test
// (tests/unit/test_fuzz_regressions.cpp) so every kept input replays exactly the
// path that once failed. npucc::Error is an accepted refusal; anything else (a
// crash, a sanitizer report, another exception type escaping) is a bug.

#include "compiler/validate.h"
#include "npucc/compile.h"
#include "npucc/error.h"
#include "npucc/memory_plan.h"
#include "npucc/model.h"
#include "passes/pass_manager.h"
#include "passes/registry.h"

#include <cstdint>
#include <string>

namespace npucc::fuzz {

// Everything a model file reaches: protobuf parsing, version, nesting and tensor
// checks, external-data resolution, the ONNX checker, shape inference, the pass
// pipeline and the memory plan. Returns true when the model got all the way through.
inline bool feed_model_reader(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  ReadLimits limits;
  limits.max_tensor_bytes = uint64_t{64} << 20; // keep the fuzzer's memory bounded
  limits.max_memory_bytes = uint64_t{256} << 20;
  try {
    Model model = parse_model(bytes, "fuzz-input/model.onnx", limits);
    passes::PassManager sort(passes::create_passes({"topological_sort"}));
    sort.run(model.proto, passes::FixedPoint::no);
    compiler::check_model(model.proto);
    compiler::infer_shapes_strict(model.proto);
    passes::PassManager pipeline(passes::create_passes(passes::default_pipeline()));
    pipeline.run(model.proto);
    plan_memory(model.proto.graph());
    return true;
  } catch (const Error&) {
    return false;
  }
}

// The option parsers that take free text; the first byte picks the parser, so one
// corpus covers them all.
inline void feed_options(const uint8_t* data, size_t size) {
  if (size == 0) {
    return;
  }
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 2) {
    case 0:
      parse_input_shapes(text);
      break;
    default:
      parse_memory_size(text);
      break;
    }
  } catch (const Error&) {
  }
}

} // namespace npucc::fuzz
