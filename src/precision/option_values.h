#pragma once

// The values the precision options accept, from the lists that validate them
// (precision/train_mode.cpp), for `npucc completion` to offer: a value added there is
// offered without a second list to update.

#include <string>
#include <vector>

namespace npucc::precision {

const std::vector<std::string>& precision_mode_values();
const std::vector<std::string>& precision_mode_v2_values();

// accelerate_train_mode's usual spellings: every TYPE|TRIGGER pair, bare and with its
// default ratio ("fast|step", "fast|step|0.9", ..., "fast1|loss|1.05").
std::vector<std::string> accelerate_train_mode_values();

} // namespace npucc::precision
