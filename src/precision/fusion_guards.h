#pragma once

// Single-input Max copies that keep ONNX Runtime's LayerNormFusion from absorbing a Cast
// back to float32 (fusion_guards.cpp says why), in low and emulation graphs alike.

#include <cstdint>
#include <functional>
#include <onnx/onnx_pb.h>
#include <string>
#include <unordered_set>

namespace npucc::precision::detail {

// Is `node` a standard-domain Cast to `to`?
bool is_cast_to(const onnx::NodeProto& node, int32_t to);

// Guards every Cast to float32 that reads one of `low_values` and whose result a ReduceMean
// reads, in every graph under `root`; returns the number of guards. `unique` makes names.
int64_t guard_layer_norm_inputs(onnx::GraphProto& root,
                                const std::unordered_set<std::string>& low_values,
                                const std::function<std::string(const std::string&)>& unique);

} // namespace npucc::precision::detail
