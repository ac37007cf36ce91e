#include "passes/registry.h"

#include "npucc/error.h"
#include "passes/deduplicate_initializers.h"
#include "passes/eliminate_dead_code.h"
#include "passes/eliminate_dropout.h"
#include "passes/eliminate_identity.h"
#include "passes/fold_cast_chains.h"
#include "passes/fold_constants.h"
#include "passes/fold_if.h"
#include "passes/fold_shapes.h"
#include "passes/fuse_hard_activations.h"
#include "passes/lift_constants.h"
#include "passes/remove_unused_opsets.h"
#include "passes/topological_sort.h"
#include "util/strings.h"

#include <functional>

namespace npucc::passes {

namespace {

// Whether the default pipeline runs a pass; the others run only when named in --passes
// or called by a later stage.
enum class InDefaultPipeline { yes, no };

struct Entry {
  const char* name;
  std::function<std::unique_ptr<Pass>()> make;
  InDefaultPipeline in_default = InDefaultPipeline::yes;
};

// The one list of passes: no self-registration, so the order and the set are
// visible here. Pipeline order matters: sort first (the others assume it), remove
// dead code after the passes that orphan nodes.
const std::vector<Entry>& entries() {
  static const std::vector<Entry> list = {
      {"topological_sort", [] { return std::make_unique<TopologicalSort>(); }},
      // Weights held in Constant nodes become initializers, which the passes below
      // (deduplication, dead code) then see.
      {"lift_constants", [] { return std::make_unique<LiftConstants>(); }},
      // Shape arithmetic on static shapes becomes constants, which lets shape
      // inference (re-run by the compiler) give static shapes past Reshape & co.
      {"fold_shapes", [] { return std::make_unique<FoldShapes>(); }},
      {"fold_constants", [] { return std::make_unique<FoldConstants>(); }},
      // Shape inference merges both branches of an If: one that never runs can hide
      // the static shapes of the one that does. Before eliminate_identity.
      {"fold_if", [] { return std::make_unique<FoldIf>(); }},
      // Before dead code: a folded chain leaves its first Cast unread.
      {"fold_cast_chains", [] { return std::make_unique<FoldCastChains>(); }},
      // Inference Dropouts are identities (ONNX's optimizer and ORT remove them too); their
      // mask's type change at version 10 would otherwise stop fast1's raise to opset 22.
      {"eliminate_dropout", [] { return std::make_unique<EliminateDropout>(); }},
      {"eliminate_identity", [] { return std::make_unique<EliminateIdentity>(); }},
      {"eliminate_dead_code", [] { return std::make_unique<EliminateDeadCode>(); }},
      // After dead code, so that only initializers still read are compared.
      {"deduplicate_initializers", [] { return std::make_unique<DeduplicateInitializers>(); }},
      // Last: it needs to see which domains the surviving nodes use.
      {"remove_unused_opsets", [] { return std::make_unique<RemoveUnusedOpsets>(); }},
      // Not by default: it changes how a low type rounds, so the precision rewrite runs it
      // on lowered graphs only (precision/compile_precision.cpp); the high graph keeps the
      // model's nodes.
      {"fuse_hard_activations", [] { return std::make_unique<FuseHardActivations>(); },
       InDefaultPipeline::no},
  };
  return list;
}

} // namespace

std::vector<PassInfo> registered_passes() {
  std::vector<PassInfo> infos;
  for (const auto& entry : entries()) {
    auto pass = entry.make();
    infos.push_back({pass->name(), pass->description()});
  }
  return infos;
}

std::vector<std::string> default_pipeline() {
  std::vector<std::string> names;
  for (const auto& entry : entries()) {
    if (entry.in_default == InDefaultPipeline::yes) {
      names.emplace_back(entry.name);
    }
  }
  return names;
}

std::unique_ptr<Pass> create_pass(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& entry : entries()) {
    if (name == entry.name) {
      return entry.make();
    }
    names.emplace_back(entry.name);
  }
  std::string suggestion = util::closest_match(name, names);
  throw usage_error("unknown pass \"" + name + "\"" +
                        (suggestion.empty() ? "" : "; did you mean \"" + suggestion + "\"?"),
                    "known passes: " + util::join(names, ", "));
}

std::vector<std::unique_ptr<Pass>> create_passes(const std::vector<std::string>& names) {
  std::vector<std::unique_ptr<Pass>> passes;
  for (const auto& name : names) {
    passes.push_back(create_pass(name));
  }
  return passes;
}

} // namespace npucc::passes
