// Fuzzes everything a model file reaches: protobuf parsing, version and tensor
// checks, external-data resolution, the ONNX checker, shape inference, the pass
// pipeline and the memory plan. Any npucc::Error is an accepted refusal; anything
// else (a crash, a sanitizer report, another exception type escaping) is a bug.
#include "compiler/validate.h"
#include "npucc/error.h"
#include "npucc/memory_plan.h"
#include "npucc/model.h"
#include "passes/pass_manager.h"
#include "passes/registry.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  npucc::ReadLimits limits;
  limits.max_tensor_bytes = uint64_t{64} << 20; // keep the fuzzer's memory bounded
  try {
    npucc::Model model = npucc::parse_model(bytes, "fuzz-input/model.onnx", limits);
    npucc::passes::PassManager sort(npucc::passes::create_passes({"topological_sort"}));
    sort.run(model.proto, npucc::passes::FixedPoint::no);
    npucc::compiler::check_model(model.proto);
    npucc::compiler::infer_shapes_strict(model.proto);
    npucc::passes::PassManager pipeline(
        npucc::passes::create_passes(npucc::passes::default_pipeline()));
    pipeline.run(model.proto);
    npucc::plan_memory(model.proto.graph());
  } catch (const npucc::Error&) {
  }
  return 0;
}
