#pragma once

#include "npucc/compile.h"

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

namespace npucc::precision {

// The opset from which ONNX allows bfloat16 for Conv, ConvTranspose, the pools,
// InstanceNormalization, LSTM/GRU/RNN and about 40 more ops.
inline constexpr int k_bfloat16_opset = 22;
// The opset from which BatchNormalization's scale, bias and statistics may be float32 beside
// a float16 input (T1/T2 apart from T): before it they share the input's type, and the
// statistics stay float32, so a float16 low graph keeps every BatchNormalization float32.
inline constexpr int k_float16_opset = 15;

enum class LowGraphRaise { yes, no };

// fast1 (LowGraphRaise::yes) below opset 22 without --target-opset: raises `low` (typed)
// to opset 22 when one of its ops gains bfloat16 there (low_graph_opset.cpp says why).
// Returns the report's "opset" object:
// {"model", "low_graph", "raised", "adapted"?: {"Op-version": count},
//  "schema_float32"?: {op: count}, "why"?} (the last two when bfloat16 graph nodes stay
// float32 for want of the raise), or null when the model is at 22 or later.
// fast (float16, LowGraphRaise::yes) below opset 15 without --target-opset: raises `low` to
// 15 when it holds a BatchNormalization (k_float16_opset); returns null when it holds none,
// when the raise is refused (the report's --target-opset hint then says what a raise would
// give) and for the float16 precision modes. A refused raise leaves `low` as it was.
nlohmann::json raise_low_graph(onnx::ModelProto& low, const CompileOptions& options,
                               LowPrecision low_type, LowGraphRaise raise);

// The report's line for that object ("opset: low graph raised from 13 to 22 ..." or
// "schema at opset 13: 20 Conv stay float32; --target-opset 22 lowers them (...)"); empty
// when there is nothing to say.
std::string low_graph_opset_line(const nlohmann::json& opset);

// "20 Conv, 3 MaxPool": the nodes such an object says stay float32 ("schema_float32").
std::string low_graph_opset_held(const nlohmann::json& opset);

} // namespace npucc::precision
