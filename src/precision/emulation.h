#pragma once

#include <cstdint>
#include <onnx/onnx_pb.h>

namespace npucc::precision {

// Turns a low (mixed-precision) graph into its float32 emulation, in place: every op
// computes in float32, but every value the low graph holds in float16/bfloat16 goes
// through a Cast to that type and back, where it is defined (node outputs, constants,
// graph inputs). So a float32-only runtime (ONNX Runtime on CPU has no bfloat16 kernels)
// shows the numerical effect of the low graph. The low graph's own Casts to float32 are the
// way back of their round trips (no float32 -> float32 Casts), and the bfloat16 inputs of
// decomposed layer norms are guarded against ONNX Runtime's LayerNormFusion
// (emulation_casts.cpp).
struct EmulationResult {
  int64_t round_trips = 0;
  int64_t fusion_guards = 0; // single-input Max nodes before a decomposed layer norm
};
EmulationResult make_emulation(onnx::ModelProto& model);

} // namespace npucc::precision
