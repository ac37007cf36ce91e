#pragma once

// The Casts of an emulation graph after its round trips are in place (emulation.cpp): the low
// graph's own Casts back to float32, and the Casts a runtime's fusions must not absorb.

#include <cstdint>
#include <functional>
#include <onnx/onnx_pb.h>
#include <string>
#include <unordered_map>

namespace npucc::precision::detail {

// A round trip's float32 result -> the low copy it was made from, and the low type.
struct LowCopy {
  std::string name;
  int32_t type = 0;
};
using RoundTrips = std::unordered_map<std::string, LowCopy>;

// The low graph's Casts to float32 read low values; in the emulation those values are float32
// already, so each such Cast would be a no-op float32 -> float32 Cast. They read the low copy
// instead (becoming the round trip's way back), and a round trip's own way back that nothing
// reads any more is removed. Covers every graph under `root` (bodies read outer values).
void read_low_copies(onnx::GraphProto& root, const RoundTrips& trips);

// Guards every Cast from a bfloat16 copy back to float32 whose result a ReduceMean reads
// (fusion_guards.h); returns the number of guards.
int64_t guard_bfloat16_layer_norm_inputs(
    onnx::GraphProto& root, const RoundTrips& trips,
    const std::function<std::string(const std::string&)>& unique);

} // namespace npucc::precision::detail
