#include "passes/registry.h"

#include "npucc/error.h"
#include "passes/topological_sort.h"
#include "util/strings.h"

#include <functional>

namespace npucc::passes {

namespace {

struct Entry {
  const char* name;
  std::function<std::unique_ptr<Pass>()> make;
};

// The one list of passes: no self-registration, so the order and the set are
// visible here. Pipeline order matters: sort first (the others assume it), remove
// dead code after the passes that orphan nodes.
const std::vector<Entry>& entries() {
  static const std::vector<Entry> list = {
      {"topological_sort", [] { return std::make_unique<TopologicalSort>(); }},
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
    names.emplace_back(entry.name);
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
