#pragma once

#include "npucc/cache_key.h"
#include "npucc/compile.h"

#include <onnx/onnx_pb.h>
#include <string>
#include <vector>

// The options as the cache key sees them: canonical_options() of a request with whatever
// cannot change a byte of the stored files left out, so that requests that differ only
// there share one entry (issue 32). What is left out, and why, is said in
// CacheKey::not_in_key (`npucc cache explain`, the manifest's cache_key_components).
//
// Left out:
//   - the schedule: accelerate_train_mode's TRIGGER and RATIO decide when training
//     switches graphs, not what either graph holds; its TYPE stays (it decides the low
//     graph). The manifest's "schedule" is written from the request when an entry is
//     materialised (pipeline/cache_lookup.cpp).
//   - an --input-shape entry equal to the declared shape of that input: every dim the
//     request fixes is already that value in the model, or is -1 (kept as declared). A
//     dim the model names (N) or leaves unknown, given a value, is not a no-op.
//   - --target-opset equal to the model's ai.onnx opset, when it changes nothing else:
//     fast1 (and a bfloat16 precision mode) raises its low graph to opset 22 unless
//     --target-opset is given, so below 22 that stays in the key.
//   - --passes equal to the default pipeline (keyed as the default, as it always was).
// Each is dropped only where the compile with and without it behaves alike, errors
// included: an option that would fail (an input the model lacks, an opset above what
// npucc raises to) stays in the key.
namespace npucc::compiler {

struct KeyOptions {
  std::string canonical; // canonical_options() of the request without its no-ops
  std::vector<KeyOmission> not_in_key;
};

// `model`: the model as read, before --input-shape applies to it; nullptr when only its
// bytes' digest is known (a hit through the model index), where options that need the
// model to be judged (key_options_need_model) stay in the key.
KeyOptions key_options(const CompileOptions& options, const onnx::ModelProto* model);

// Whether key_options needs the model itself for these options: without it, their key
// could differ from the one the model gives.
bool key_options_need_model(const CompileOptions& options);

// The value of a key's "options" component (its canonical JSON): what an entry's header
// and manifest record as its options. Throws npucc::Error when the key has none.
const std::string& options_component(const CacheKey& key);

// Whether `shape` changes nothing of the model's declared input of that name.
bool input_shape_is_declared(const onnx::GraphProto& graph, const InputShape& shape);

} // namespace npucc::compiler
