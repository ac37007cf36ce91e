#pragma once

#include "npucc/train_mode.h"
#include "precision/op_lists.h"
#include "precision/overflow_prescan.h"

#include <cstdint>
#include <map>
#include <onnx/onnx_pb.h>
#include <set>
#include <string>
#include <vector>

namespace npucc::precision {

// Which ops the rewrite lowers.
enum class Policy {
  mixed,       // the allow/infer/clear/deny lists (allow_mix_precision*, mixed_*, accelerate)
  matrix_only, // only allow-list ops, everything else keeps its type (allow_fp32_to_fp16/bf16)
  force,       // every op whose schema takes the low type (force_fp16, v2 fp16)
};

enum class KeepIoTypes { yes, no };

// Trainable weights (main-graph float32 initializers): kept float32 and cast at use (the
// master weights of an accelerate_train_mode compile), or stored in the low type.
enum class WeightStorage { master_float32, low };

struct RewriteOptions {
  LowPrecision low = LowPrecision::float16;
  Policy policy = Policy::mixed;
  OpLists lists; // for mixed and matrix_only
  // Node names pinned to their original precision (--keep-dtype); an unknown name is an error.
  std::set<std::string> keep_nodes;
  // Node names the accuracy repair keeps float32 (reason "accuracy"); names from this graph.
  std::set<std::string> accuracy_nodes;
  // Node names the activation-range rule keeps float32 (reason "activation_range") -> the
  // numbers the precision report gives beside the reason ("range").
  std::map<std::string, std::string> range_nodes;
  // Deny-list node names the accuracy descent lowered (accuracy/descent.h): tried low like
  // an allow op, reason "accuracy_lowered" in the report; names from this graph. An op the
  // user put on the black list (user_denied) stays float32 whatever this says.
  std::set<std::string> lowered_nodes;
  // Ops --modify-mixlist added to the black list: float32 as asked, with no exception
  // (paint.cpp's low Softmax read by low matrix ops is one).
  std::set<std::string> user_denied;
  KeepIoTypes keep_io_types = KeepIoTypes::yes;
  WeightStorage weights = WeightStorage::low;
  // Overflow counts made before the rewrite (a cache key's read of the weights).
  OverflowSource overflow;
};

// A float32 constant the low graph keeps in float32, and why.
struct Float32Constant {
  std::string name;
  // "overflow" (would become inf in the low type; its consumers stay float32),
  // "master_weight" (cast at use), "shared" (also read by float32 consumers: cast at use),
  // "schema_input" (read through an input the op's schema keeps float32: normalisation
  // statistics, Resize scales),
  // "consumers_float32" (every consumer runs in float32)
  std::string reason;
  uint64_t overflow_values = 0;
  uint64_t bytes = 0;
};

// One node of the model (nested bodies included, inserted Casts not) and its precision.
struct NodePrecision {
  std::string name;      // NodeProto.name, possibly empty
  std::string op_type;
  std::string output;    // its first output, which names a node without a name
  std::string precision; // "float16", "bfloat16", "float32" or "n/a" (no float data)
  std::string reason;    // why it kept float32 (npucc-precision(7), REASONS); "" when low
  std::string range;     // reason "activation_range": the numbers ("max 1.04e+05 > 65504")
  // A deny-list node the accuracy descent lowered (RewriteOptions::lowered_nodes) that
  // runs low: the report says so beside its precision, since it has no kept reason.
  bool accuracy_lowered = false;
};

struct RewriteReport {
  std::string low_type; // "float16" | "bfloat16"
  // op type -> assigned precision ("float16", "bfloat16", "float32", "n/a" for nodes
  // with no float data) -> node count; nested bodies included, inserted Casts excluded.
  std::map<std::string, std::map<std::string, int64_t>> nodes;
  // Why float nodes stayed float32: reason -> count (see mixed_precision.cpp).
  std::map<std::string, int64_t> kept_reasons;
  std::vector<NodePrecision> node_precisions; // every node, in graph order
  int64_t casts_inserted = 0;
  std::map<std::string, int64_t> casts_by_type; // target type -> count
  int64_t casts_folded = 0;                     // casts avoided by reusing a Cast's input
  std::vector<Float32Constant> float32_constants;
  int64_t constants_converted = 0;
  uint64_t converted_bytes_before = 0; // float32 bytes of the converted constants
  uint64_t converted_bytes_after = 0;
  uint64_t master_weight_bytes = 0; // float32 bytes kept as master weights
  std::vector<std::string> warnings;
  int64_t fusion_guards = 0; // single-input Max copies before decomposed layer norms
};

// Rewrites a fully typed (shape-inferred), topologically sorted model in place into mixed
// precision. The result keeps the graph inputs/outputs (by default), is valid for the ONNX
// checker and typed shape inference, and is a fixed point: running it again changes nothing.
RewriteReport rewrite_mixed_precision(onnx::ModelProto& model, const RewriteOptions& options);

int32_t low_elem_type(LowPrecision low);

} // namespace npucc::precision
