#pragma once

#include "passes/pass.h"

#include <memory>
#include <string>
#include <vector>

namespace npucc::passes {

struct PassInfo {
  std::string name;
  std::string description;
};

// Every pass npucc has: the default pipeline's in the order it runs them, then the ones it
// does not run (fuse_hard_activations).
std::vector<PassInfo> registered_passes();

// The passes of the default optimisation pipeline.
std::vector<std::string> default_pipeline();

// Makes a pass by name; an unknown name throws npucc::Error with "did you mean ...".
std::unique_ptr<Pass> create_pass(const std::string& name);

std::vector<std::unique_ptr<Pass>> create_passes(const std::vector<std::string>& names);

} // namespace npucc::passes
