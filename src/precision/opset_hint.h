#pragma once

// A model whose opset keeps nodes float32 for their schema (BatchNormalization before 15
// ties its statistics' type to its input's, and the statistics stay float32) says how many
// more nodes `--target-opset N` would lower, as fast1 reports its own raise
// (low_graph_opset.h). The count comes from lowering a raised copy of the optimised graph
// once more (compile_precision.cpp), and only when a later opset frees a held op. It is an
// estimate: with --target-opset the passes run after the raise, and may fold a few nodes
// otherwise (ppocr_cls with --input-shape: 160 of 161 estimated, 161 of 163 compiled).

#include <cstdint>
#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>
#include <string>

namespace npucc::precision {

// The smallest opset (above the model's, at most opset::k_max_target_opset) at which every
// op the report keeps float32 for its schema ("reason": "schema") runs in the report's low
// type, of those a later version lets; 0 when no later version frees any of them.
int64_t opset_freeing_schema_holds(const onnx::ModelProto& model, const nlohmann::json& report);

// The report's "target_opset_hint", from the report and the one of the same lowering of the
// model raised to `target`: {"target_opset", "schema_float32": {op: count}, "low_nodes",
// "float_nodes", "casts_inserted"} (the last three as raised); null when the raise lowers
// no more nodes.
nlohmann::json target_opset_hint(const nlohmann::json& report, const nlohmann::json& raised,
                                 int64_t target);

// "opset: 35 BatchNormalization stay float32 for their schema; --target-opset 15 lowers about
// 163 of 165 float nodes (81 more) and inserts about 75 casts instead of 154"; empty
// without a hint.
std::string target_opset_hint_line(const nlohmann::json& report);

// A report's float nodes and how many of them are low (Constants not counted: values, not
// compute).
struct LowCount {
  int64_t low = 0;
  int64_t float_nodes = 0;
};
LowCount count_low_nodes(const nlohmann::json& report);

} // namespace npucc::precision
