#pragma once

#include "npucc/train_mode.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace npucc::precision {

// How the mixed-precision rewrite treats an ONNX op (default domain only):
// - allow: runs in the low type whenever its schema allows it (matrix ops);
// - infer: follows its inputs (low when one input is low and no input is denied);
//   deny spreads forward through it;
// - clear: like infer, but deny passes through only on its way to an infer/deny op;
// - deny: stays float32 and spreads float32 forward.
// An op in no list keeps its original precision.
enum class OpClass { none, allow, infer, clear, deny };

const char* op_class_name(OpClass op_class);

struct OpLists {
  std::set<std::string> allow;
  std::set<std::string> infer;
  std::set<std::string> deny;
  std::set<std::string> clear;

  OpClass classify(const std::string& op_type) const;
};

// The built-in lists for a low type; see op_lists.cpp for where each entry comes from.
OpLists default_op_lists(LowPrecision low);

// Ops whose output type comes from an attribute (Cast, BitCast, Constant, window functions)
// or that make values from nothing (Range, random ops), and control flow: never lowered,
// whatever the policy or the lists say.
const std::set<std::string>& never_lowered_ops();

// Ops of opsets 17 to 26 that are in no list on purpose (they keep their original
// precision), each with the reason; every other op introduced since 17 is in a list or
// never lowered (a unit test checks it).
const std::map<std::string, std::string>& unlisted_ops();

// An Ascend-style modify_mixlist edit:
// {"black-list"|"white-list"|"gray-list": {"to-add": [...], "to-remove": [...]}}
// black = deny, white = allow, gray = infer. Adding an op moves it into that list;
// removing it makes it gray (Ascend: an unlisted op follows the op before it).
struct MixlistEdit {
  std::map<std::string, std::vector<std::string>> to_add;    // list name -> ops
  std::map<std::string, std::vector<std::string>> to_remove; // list name -> ops
};

// Parses the JSON text; `source` names the file in messages. Throws usage_error on a
// syntax error, an unknown key, an op named in two lists, or an op name the ONNX schema
// registry does not know.
MixlistEdit parse_mixlist(const std::string& json_text, const std::string& source);

// Applies the edit; returns warnings (an op removed from a list it is not in).
std::vector<std::string> apply_mixlist(OpLists& lists, const MixlistEdit& edit);

} // namespace npucc::precision
