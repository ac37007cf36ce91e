#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <onnx/onnx_pb.h>

namespace npucc::passes {

// What a pass sees of the graph it runs on. The framework builds one per graph it
// visits: the main graph, then every If/Loop/Scan body, outer before inner.
struct GraphContext {
  const onnx::ModelProto* model = nullptr;
  // 0 for the main graph, n for a body nested n levels deep.
  int depth = 0;
  // Names visible from enclosing graphs (a body may read them, never define them).
  std::unordered_set<std::string> outer_names;
  // Element types of every name visible here (graph inputs, outputs, value_info,
  // initializers, of this and enclosing graphs), when shape inference has run.
  std::unordered_map<std::string, int32_t> elem_types;
  // Shapes of the names above whose rank is known, from the same sources; a dim
  // without a value is -1. Initializers count: their dims are static.
  std::unordered_map<std::string, std::vector<int64_t>> shapes;
  // True inside a Loop or Scan body (at any depth): values there may change shape
  // from one iteration to the next, whatever one round of inference says.
  bool in_loop_body = false;

  bool is_main_graph() const { return depth == 0; }
  // 0 when unknown.
  int32_t elem_type(const std::string& name) const {
    auto it = elem_types.find(name);
    return it == elem_types.end() ? 0 : it->second;
  }
  // Null when the rank is unknown.
  const std::vector<int64_t>* shape(const std::string& name) const {
    auto it = shapes.find(name);
    return it == shapes.end() ? nullptr : &it->second;
  }
};

// One graph-rewriting step. A pass never changes what the graph computes; it
// returns how many things it changed (nodes removed, moved, rewritten) so that
// the manager can report it and run to a fixed point.
class Pass {
public:
  virtual ~Pass() = default;
  // The name it registers under, as used by --passes and in reports.
  virtual const char* name() const = 0;
  virtual const char* description() const = 0;
  // What the count returned means, e.g. "nodes removed".
  virtual const char* unit() const { return "changes"; }

  // Graph passes override this; the framework calls it for every graph, nested
  // bodies included, so passes never recurse themselves.
  virtual int64_t run_on_graph(onnx::GraphProto& /*graph*/, const GraphContext& /*context*/) {
    return 0;
  }
  // Whole-model passes (opset imports) override this instead and return true from
  // is_model_pass(); the framework calls it once.
  virtual bool is_model_pass() const { return false; }
  virtual int64_t run_on_model(onnx::ModelProto& /*model*/) { return 0; }
};

} // namespace npucc::passes
