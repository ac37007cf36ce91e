#pragma once

#include <cstdint>
#include <onnx/onnx_pb.h>

namespace npucc::precision {

// Turns a low (mixed-precision) graph into its float32 emulation, in place: every op
// computes in float32, but every value the low graph holds in float16/bfloat16 goes
// through a Cast to that type and back, where it is defined (node outputs, constants,
// graph inputs). So a float32-only runtime (ONNX Runtime on CPU has no bfloat16 kernels)
// shows the numerical effect of the low graph. Returns the number of round trips.
int64_t make_emulation(onnx::ModelProto& model);

} // namespace npucc::precision
