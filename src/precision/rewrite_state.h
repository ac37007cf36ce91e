#pragma once

// Internal state of the mixed-precision rewrite, shared by its phases:
// paint.cpp (decide per node), constants.cpp (decide and convert constants),
// cast_insertion.cpp (Casts and declared types), mixed_precision.cpp (driver, report).

#include "precision/mixed_precision.h"

#include <memory>
#include <onnx/defs/schema.h>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace npucc::precision::detail {

struct Scope;

enum class Source { input, initializer, constant_node, node };

// A value defined in one graph (scope).
struct Tensor {
  std::string name;
  Scope* owner = nullptr;
  Source source = Source::node;
  int producer = -1; // node index in owner, for Source::node / constant_node
  int32_t orig = 0;  // element type in the input model (0: not a tensor or unknown)
  int32_t final_type = 0;
  std::optional<onnx::TypeProto> declared; // shape as declared, for new value_info
  bool graph_output = false;
  bool overridable = false;          // an initializer that is also a graph input
  onnx::TensorProto* data = nullptr; // the constant's value
  uint64_t overflow = 0;
  bool master_weight = false;
  int low_uses = 0;
  int other_uses = 0;
  int pinned_uses = 0;
};

struct NodeState {
  const onnx::OpSchema* schema = nullptr;
  OpClass op_class = OpClass::none;
  bool has_float = false;
  bool low = false;
  std::string kept_reason; // why a float node stayed in its type
  std::string forced;      // a reason that overrides the lists
  bool denied = false;
  std::vector<bool> pinned_in;
  std::vector<bool> pinned_out;
  std::vector<int32_t> wanted_in; // element type each input must arrive in
};

struct Scope {
  onnx::GraphProto* graph = nullptr;
  Scope* parent = nullptr;
  int depth = 0;
  std::unordered_map<std::string, Tensor> tensors;
  std::vector<NodeState> nodes;
  std::vector<std::unique_ptr<Scope>> children;
  // Casts created here, keyed by (source name, target type); placed after the producer.
  std::map<std::pair<std::string, int32_t>, std::string> casts;
  std::vector<std::vector<onnx::NodeProto>> casts_after;
  std::vector<onnx::NodeProto> casts_front;

  Tensor* find(const std::string& name) {
    for (Scope* scope = this; scope != nullptr; scope = scope->parent) {
      auto it = scope->tensors.find(name);
      if (it != scope->tensors.end()) {
        return &it->second;
      }
    }
    return nullptr;
  }
};

struct Context {
  const onnx::ModelProto* model = nullptr;
  const RewriteOptions* options = nullptr;
  int32_t low = 0;
  // Cast at the model's opset converts float32 <-> the low type (bfloat16 needs Cast-13):
  // without it no value can change type, so nothing is lowered.
  bool cast_supports_low = true;
  std::unordered_set<std::string> taken_names; // every node and value name, for unique names
  RewriteReport* report = nullptr;

  std::string unique_name(const std::string& base) {
    std::string name = base;
    for (int n = 1; taken_names.count(name) != 0; ++n) {
      name = base + "_" + std::to_string(n);
    }
    taken_names.insert(name);
    return name;
  }
};

// paint.cpp: builds the scope tree and decides every node.
std::unique_ptr<Scope> build_and_paint(onnx::GraphProto& graph, Context& context);
// runtime_workarounds.cpp: forces float32 on nodes a runtime fails on when low (from paint).
void mark_runtime_workarounds(Scope& scope);
// constants.cpp: records uses, decides which constants convert; converts them.
void decide_constants(Scope& root, Context& context);
void convert_constants(Scope& root, Context& context);
// low_attributes.cpp: attributes a lowered node needs (Attention's softmax_precision).
void set_low_attributes(Scope& scope);
// cast_insertion.cpp: Casts, declared types, node order.
void insert_casts(Scope& root, Context& context);

bool is_low(int32_t elem_type);

} // namespace npucc::precision::detail
