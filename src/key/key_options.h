#pragma once

#include "npucc/cache_key.h"
#include "npucc/compile.h"

#include <map>
#include <onnx/onnx_pb.h>
#include <optional>
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
namespace npucc::key {

struct KeyOptions {
  std::string canonical; // canonical_options() of the request without its no-ops
  std::vector<KeyOmission> not_in_key;
};

// What key_options needs of a model to judge the options that depend on it
// (key_options_need_model): its ai.onnx opset and the declared shape of each graph input
// that is not an initializer (the last of a name), a dim it names or leaves unknown as
// nullopt; an input without a tensor shape has no entry. Taken from the model as read,
// before --input-shape applies to it, or from its model index (cache/model_index.h), so
// that a hit with those options parses nothing.
struct KeyFacts {
  int64_t opset = 0;
  std::map<std::string, std::vector<std::optional<int64_t>>> input_shapes;
};
KeyFacts key_facts(const onnx::ModelProto& model);
// One line of text for the model index, and back (nullopt: not facts).
std::string key_facts_text(const KeyFacts& facts);
std::optional<KeyFacts> parse_key_facts(const std::string& text);

// `model`: the facts of the model as read; nullptr when only its bytes' digest is known
// (a hit through a model index without them), where options that need the model to be
// judged (key_options_need_model) stay in the key. `runtime`: the identity of the runtime
// an accuracy check runs in (runtime_identity), keyed only when the check runs.
KeyOptions key_options(const CompileOptions& options, const KeyFacts* model,
                       const std::string& runtime);
// key_options with this process's runtime identity.
KeyOptions key_options(const CompileOptions& options, const KeyFacts* model);
// key_options of the model's facts.
KeyOptions key_options(const CompileOptions& options, const onnx::ModelProto& model);

// The runtime an accuracy check of `options` runs in, as the key names it
// (runtime::detail::library_identity); "" when accuracy is not checked.
std::string runtime_identity(const CompileOptions& options);

// canonical_options() with `runtime` as the runtime's identity: the options component's text.
std::string canonical_text(const CompileOptions& options, const std::string& runtime);

// Whether key_options needs the model itself for these options: without it, their key
// could differ from the one the model gives.
bool key_options_need_model(const CompileOptions& options);

// Whether `shape` changes nothing of the model's declared input of that name.
bool input_shape_is_declared(const KeyFacts& model, const InputShape& shape);

} // namespace npucc::key
