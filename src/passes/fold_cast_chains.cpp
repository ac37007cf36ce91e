#include "passes/fold_cast_chains.h"

#include "passes/node_rewriter.h"
#include "passes/op_version.h"
#include "passes/rename.h"

#include <unordered_map>

namespace npucc::passes {

namespace {

using T = onnx::TensorProto;

bool is_default_domain(const onnx::NodeProto& node) {
  return node.domain().empty() || node.domain() == "ai.onnx";
}

// Cast-1 (`to` a string) is not read. Versions 19-25 add float8/int4/float4 types and
// `saturate`/`round_mode`, which only change conversions to float8 types, never exact
// ones between the types range_of knows.
bool is_cast(const onnx::NodeProto& node, const onnx::ModelProto* model) {
  if (!is_default_domain(node) || node.input_size() < 1 || node.input(0).empty() ||
      node.output_size() != 1) {
    return false;
  }
  if (node.op_type() == "Cast") {
    return version_is_one_of(node, model, {6, 9, 13, 19, 21, 23, 24, 25});
  }
  return node.op_type() == "CastLike" && version_is_one_of(node, model, {15, 19, 21, 23, 24, 25});
}

// The element type a Cast or CastLike converts to; 0 when unknown.
int32_t target_type(const onnx::NodeProto& node, const GraphContext& context) {
  if (node.op_type() == "CastLike") {
    return node.input_size() == 2 ? context.elem_type(node.input(1)) : 0;
  }
  for (const auto& attribute : node.attribute()) {
    if (attribute.name() == "to" && attribute.ref_attr_name().empty()) {
      return static_cast<int32_t>(attribute.i());
    }
  }
  return 0;
}

// The number of significand bits (with the implicit one) and the largest finite
// exponent of the floating types; integers hold every value up to 2^bits exactly.
struct Range {
  bool is_float;
  bool is_signed;
  int bits; // significand bits for floats, value bits for integers
  int max_exponent;
};

bool range_of(int32_t type, Range& range) {
  switch (type) {
  case T::BOOL:
    range = {false, false, 1, 0};
    return true;
  case T::UINT8:
    range = {false, false, 8, 0};
    return true;
  case T::INT8:
    range = {false, true, 7, 0};
    return true;
  case T::UINT16:
    range = {false, false, 16, 0};
    return true;
  case T::INT16:
    range = {false, true, 15, 0};
    return true;
  case T::UINT32:
    range = {false, false, 32, 0};
    return true;
  case T::INT32:
    range = {false, true, 31, 0};
    return true;
  case T::UINT64:
    range = {false, false, 64, 0};
    return true;
  case T::INT64:
    range = {false, true, 63, 0};
    return true;
  case T::FLOAT16:
    range = {true, true, 11, 15};
    return true;
  case T::BFLOAT16:
    range = {true, true, 8, 127};
    return true;
  case T::FLOAT:
    range = {true, true, 24, 127};
    return true;
  case T::DOUBLE:
    range = {true, true, 53, 1023};
    return true;
  default: // strings, complex numbers, anything newer: never folded
    return false;
  }
}

} // namespace

bool cast_is_exact(int32_t from, int32_t to) {
  Range a{};
  Range b{};
  if (!range_of(from, a) || !range_of(to, b)) {
    return false;
  }
  if (from == to) {
    return true;
  }
  if (a.is_float) {
    // A float needs a float with at least its precision and exponent range (the
    // smaller format's subnormals are then normal numbers in the larger one).
    return b.is_float && b.bits >= a.bits && b.max_exponent >= a.max_exponent;
  }
  if (from == T::BOOL) {
    return true; // 0 and 1 exist in every numeric type
  }
  if (b.is_float) {
    // Integers up to 2^significand are exact, and so is the range they span.
    return a.bits <= b.bits;
  }
  if (a.is_signed && !b.is_signed) {
    return false; // negative values
  }
  return a.bits <= b.bits;
}

int64_t FoldCastChains::run_on_graph(onnx::GraphProto& graph, const GraphContext& context) {
  const NestedNames nested = nested_names(graph);
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < graph.node_size(); ++i) {
    for (const auto& name : graph.node(i).output()) {
      if (!name.empty()) {
        producer.emplace(name, i);
      }
    }
  }
  NodeRewriter rewriter(graph);
  int64_t count = 0; // inputs redirected and casts removed
  for (int i = 0; i < graph.node_size(); ++i) {
    auto& node = *graph.mutable_node(i);
    if (!is_cast(node, context.model)) {
      continue;
    }
    const int32_t to = target_type(node, context);
    if (to == 0) {
      continue;
    }
    // Cast(Cast(x: T) -> A) -> B reads x directly when T -> A loses nothing. Values
    // printed as strings could differ by type, so string targets stay.
    auto it = producer.find(node.input(0));
    if (it != producer.end() && to != T::STRING) {
      const auto& first = graph.node(it->second);
      if (!rewriter.is_edited(it->second) && is_cast(first, context.model)) {
        const int32_t source = context.elem_type(first.input(0));
        const int32_t middle = target_type(first, context);
        if (source != 0 && middle != 0 && cast_is_exact(source, middle)) {
          node.set_input(0, first.input(0));
          ++count;
        }
      }
    }
    if (context.elem_type(node.input(0)) == to && bypass_node(graph, i, nested)) {
      rewriter.remove(i);
      ++count;
    }
  }
  rewriter.apply();
  return count;
}

} // namespace npucc::passes
