#include "passes/fold_constants.h"

#include "passes/fold_values.h"
#include "passes/node_rewriter.h"
#include "passes/op_version.h"
#include "passes/rename.h"

#include <map>

namespace npucc::passes {

namespace {

bool foldable_node(const onnx::NodeProto& node) {
  if (!is_onnx_node(node) || !is_foldable_op(node.op_type()) || node.output_size() == 0) {
    return false;
  }
  for (const auto& attribute : node.attribute()) {
    // Attributes referring to an enclosing function's are only known per call.
    if (!attribute.ref_attr_name().empty()) {
      return false;
    }
  }
  return true;
}

// Whether each result has the type and the static dims inference gave its output (and
// stays within k_max_fold_elements).
bool agrees_with_inference(const onnx::NodeProto& node, const std::vector<FoldValue>& results,
                           const GraphContext& context) {
  for (size_t k = 0; k < results.size(); ++k) {
    const std::string& name = node.output(static_cast<int>(k));
    const int32_t inferred = context.elem_type(name);
    if ((inferred != 0 && inferred != results[k].type) ||
        results[k].count() > k_max_fold_elements) {
      return false;
    }
    if (const auto* dims = context.shape(name)) {
      const auto& got = results[k].dims;
      if (dims->size() != got.size()) {
        return false;
      }
      for (size_t d = 0; d < got.size(); ++d) {
        if ((*dims)[d] >= 0 && (*dims)[d] != got[d]) {
          return false;
        }
      }
    }
  }
  return true;
}

} // namespace

int64_t FoldConstants::run_on_graph(onnx::GraphProto& graph, const GraphContext& context) {
  // Before IR 4 every initializer must also be a graph input.
  if (context.model == nullptr || context.model->ir_version() < 4) {
    return 0;
  }
  std::unordered_set<std::string> inputs;
  for (const auto& value : graph.input()) {
    inputs.insert(value.name());
  }
  std::unordered_set<std::string> keep; // graph outputs stay computed by nodes
  for (const auto& value : graph.output()) {
    keep.insert(value.name());
  }
  std::unordered_map<std::string, int> constants; // initializer name -> index
  for (int i = 0; i < graph.initializer_size(); ++i) {
    if (inputs.count(graph.initializer(i).name()) == 0) {
      constants[graph.initializer(i).name()] = i;
    }
  }
  // Values read so far; nullopt marks one too big or of an unsupported type.
  std::map<std::string, std::optional<FoldValue>> values;
  auto value_of = [&](const std::string& name) -> const FoldValue* {
    auto it = values.find(name);
    if (it == values.end()) {
      it = values.emplace(name, read_fold_value(graph.initializer(constants.at(name)))).first;
    }
    return it->second ? &*it->second : nullptr;
  };

  std::unordered_set<std::string> removed;
  FoldValue like; // the type of a CastLike's non-constant second input, without values
  const int64_t count = rewrite_nodes(graph, [&](onnx::NodeProto& node, int) {
    if (!foldable_node(node)) {
      return NodeEdit::keep();
    }
    std::vector<const FoldValue*> args;
    bool ready = true;
    for (int k = 0; k < node.input_size(); ++k) {
      const std::string& name = node.input(k);
      if (name.empty()) {
        args.push_back(nullptr);
        continue;
      }
      const FoldValue* value = constants.count(name) != 0 ? value_of(name) : nullptr;
      // CastLike(constant, x) is a constant whatever x holds: exporters write it for
      // scalars of an activation's type.
      if (value == nullptr && k == 1 && node.op_type() == "CastLike" &&
          is_foldable_type(context.elem_type(name))) {
        like.type = context.elem_type(name);
        value = &like;
      }
      ready = ready && value != nullptr;
      args.push_back(value);
    }
    if (!ready) {
      return NodeEdit::keep();
    }
    for (const auto& name : node.output()) {
      ready = ready && !name.empty() && keep.count(name) == 0;
    }
    auto results =
        ready ? evaluate_node(node, args, op_version(node, context.model)) : std::nullopt;
    if (!results || results->size() != static_cast<size_t>(node.output_size())) {
      return NodeEdit::keep();
    }
    // A disagreement with inference means an evaluator bug: keep the node.
    if (!agrees_with_inference(node, *results, context)) {
      return NodeEdit::keep();
    }
    for (size_t k = 0; k < results->size(); ++k) {
      const std::string& name = node.output(static_cast<int>(k));
      *graph.add_initializer() = to_tensor((*results)[k], name);
      constants[name] = graph.initializer_size() - 1;
      values[name] = std::move((*results)[k]);
      removed.insert(name);
    }
    return NodeEdit::remove();
  });
  drop_value_info(graph, removed);
  return count;
}

} // namespace npucc::passes
