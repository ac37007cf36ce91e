// Phase 1 of the mixed-precision rewrite: decide, per node, whether it runs in the low
// type. Follows TensorFlow's AutoMixedPrecision: allow ops go low; deny ops stay float32
// and deny spreads forward through infer ops and through clear ops that lead on to an
// infer/deny op; infer and clear ops follow their inputs (Ascend's gray list: low when an
// input is low). Every decision is checked against the op's schema at the model's opset.
// Bodies (If/Loop/Scan) are painted after their graph, so the types of outer values they
// read are known; their interface (inputs, outputs) keeps its types.

#include "model/graph_walk.h"
#include "model/weight_store.h"
#include "precision/float_convert.h"
#include "precision/overflow_prescan.h"
#include "precision/rewrite_state.h"
#include "precision/schema_check.h"

#include <cstring>
#include <deque>

namespace npucc::precision::detail {

namespace {

using onnx::TensorProto;

const std::set<std::string> k_control_flow = {"If", "Loop", "Scan"};

// Ops through which float arithmetic on shapes and indices flows (traced size formulas).
const std::set<std::string> k_shape_arithmetic = {
    "Cast",   "Add",        "Sub",     "Mul",   "Div",        "Floor",    "Ceil",
    "Round",  "Neg",        "Abs",     "Max",   "Min",        "Sqrt",     "Concat",
    "Gather", "Unsqueeze",  "Squeeze", "Slice", "Reshape",    "Identity", "Clip",
    "Mod",    "Reciprocal", "Pow",     "Sum",   "ReduceProd", "Expand",   "Flatten",
};

int32_t type_of(const onnx::TypeProto& type) {
  return type.has_tensor_type() ? type.tensor_type().elem_type() : 0;
}

uint64_t count_in(const float* values, size_t count, int32_t low) {
  return low == TensorProto::FLOAT16 ? npucc::precision::count_half_overflows(values, count)
                                     : npucc::precision::count_bfloat16_overflows(values, count);
}

// Raw float32 bytes, counted in place when aligned, else a block at a time (a mapped
// Constant value or float_data may start at any offset of the file: a copy of the whole
// would cost the weight's size in memory).
uint64_t count_raw(std::string_view raw, int32_t low) {
  size_t count = raw.size() / sizeof(float);
  if (reinterpret_cast<uintptr_t>(raw.data()) % alignof(float) == 0) {
    return count_in(reinterpret_cast<const float*>(raw.data()), count, low);
  }
  constexpr size_t k_block = 16 * 1024;
  std::vector<float> block(std::min(count, k_block));
  uint64_t overflows = 0;
  for (size_t done = 0; done < count;) {
    size_t n = std::min(count - done, k_block);
    std::memcpy(block.data(), raw.data() + done * sizeof(float), n * sizeof(float));
    overflows += count_in(block.data(), n, low);
    done += n;
  }
  return overflows;
}

uint64_t count_overflows(const TensorProto& tensor, int32_t low, const OverflowSource& source) {
  if (tensor.data_type() != TensorProto::FLOAT || model::is_unloaded_external(tensor)) {
    return 0;
  }
  if (auto typed = model::typed_slice(tensor)) { // unpacked float_data: a block at a time
    uint64_t overflows = 0;
    model::decode_typed_slice(*typed, [&](std::string_view block) {
      overflows += count_raw(block, low);
      return true;
    });
    return overflows;
  }
  if (auto raw = model::raw_bytes(tensor)) {
    if (auto known = prescanned_overflows(source, *raw, low)) {
      return *known;
    }
    return count_raw(*raw, low);
  }
  std::vector<float> values(tensor.float_data().begin(), tensor.float_data().end());
  return count_in(values.data(), values.size(), low);
}

void add_tensor(Scope& scope, Context& context, Tensor tensor) {
  tensor.owner = &scope;
  tensor.final_type = tensor.orig;
  if (tensor.data != nullptr) {
    tensor.overflow = count_overflows(*tensor.data, context.low, context.options->overflow);
  }
  std::string name = tensor.name;
  scope.tensors[name] = std::move(tensor);
}

void register_tensors(Scope& scope, Context& context) {
  auto& graph = *scope.graph;
  std::unordered_map<std::string, const onnx::TypeProto*> declared;
  for (const auto& value : graph.value_info()) {
    declared[value.name()] = &value.type();
  }
  for (const auto& value : graph.output()) {
    declared[value.name()] = &value.type();
  }
  std::unordered_set<std::string> input_names;
  const bool main = scope.depth == 0;
  const bool train = context.options->weights == WeightStorage::master_float32;
  for (const auto& value : graph.input()) {
    input_names.insert(value.name());
    Tensor tensor;
    tensor.name = value.name();
    tensor.source = Source::input;
    tensor.orig = type_of(value.type());
    tensor.declared = value.type();
    add_tensor(scope, context, std::move(tensor));
  }
  for (auto& init : *graph.mutable_initializer()) {
    Tensor tensor;
    tensor.name = init.name();
    tensor.source = Source::initializer;
    tensor.orig = init.data_type();
    tensor.data = &init;
    tensor.overridable = input_names.count(init.name()) != 0;
    tensor.master_weight = main && train && tensor.orig == TensorProto::FLOAT;
    onnx::TypeProto type;
    type.mutable_tensor_type()->set_elem_type(init.data_type());
    for (int64_t dim : init.dims()) {
      type.mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(dim);
    }
    tensor.declared = type;
    add_tensor(scope, context, std::move(tensor));
  }
  for (int i = 0; i < graph.node_size(); ++i) {
    auto& node = *graph.mutable_node(i);
    for (const auto& output : node.output()) {
      if (output.empty()) {
        continue;
      }
      Tensor tensor;
      tensor.name = output;
      tensor.producer = i;
      auto it = declared.find(output);
      if (it != declared.end()) {
        tensor.orig = type_of(*it->second);
        tensor.declared = *it->second;
      }
      if (node.op_type() == "Constant" && node.domain().empty()) {
        tensor.source = Source::constant_node;
        for (auto& attribute : *node.mutable_attribute()) {
          if (attribute.name() == "value" && attribute.has_t()) {
            tensor.data = attribute.mutable_t();
            tensor.orig = attribute.t().data_type();
          }
        }
      }
      add_tensor(scope, context, std::move(tensor));
    }
  }
  for (const auto& value : graph.output()) {
    if (Tensor* tensor = scope.find(value.name())) {
      tensor->graph_output = true;
    }
  }
  if (main && context.options->keep_io_types == KeepIoTypes::no && context.cast_supports_low) {
    for (const auto& value : graph.input()) {
      Tensor& tensor = scope.tensors[value.name()];
      if (tensor.source == Source::input && tensor.orig == TensorProto::FLOAT) {
        tensor.final_type = context.low;
      }
    }
  }
}

OpClass class_for_policy(const onnx::NodeProto& node, const RewriteOptions& options) {
  switch (options.policy) {
  case Policy::mixed:
    return options.lists.classify(node.op_type());
  case Policy::matrix_only:
    return options.lists.allow.count(node.op_type()) != 0 ? OpClass::allow : OpClass::none;
  case Policy::force:
    return OpClass::allow;
  }
  return OpClass::none;
}

// Float nodes that compute shapes or indices: found backwards from index inputs.
void mark_shape_arithmetic(Scope& scope) {
  auto& graph = *scope.graph;
  std::deque<std::string> work;
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto* schema = scope.nodes[static_cast<size_t>(i)].schema;
    if (schema == nullptr) {
      continue;
    }
    for (int j = 0; j < graph.node(i).input_size(); ++j) {
      if (is_index_input(*schema, graph.node(i).op_type(), j)) {
        work.push_back(graph.node(i).input(j));
      }
    }
  }
  std::unordered_set<std::string> seen;
  while (!work.empty()) {
    std::string name = work.front();
    work.pop_front();
    if (name.empty() || !seen.insert(name).second) {
      continue;
    }
    auto it = scope.tensors.find(name);
    if (it == scope.tensors.end() || it->second.source != Source::node) {
      continue;
    }
    const auto& producer = graph.node(it->second.producer);
    if (!producer.domain().empty() || k_shape_arithmetic.count(producer.op_type()) == 0) {
      continue;
    }
    auto& state = scope.nodes[static_cast<size_t>(it->second.producer)];
    if (state.has_float && state.forced.empty()) {
      state.forced = "shape_arithmetic";
    }
    for (const auto& input : producer.input()) {
      work.push_back(input);
    }
  }
}

void classify_nodes(Scope& scope, Context& context) {
  auto& graph = *scope.graph;
  const auto& options = *context.options;
  scope.nodes.resize(static_cast<size_t>(graph.node_size()));
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    auto& state = scope.nodes[static_cast<size_t>(i)];
    state.schema = find_schema(node, *context.model);
    state.pinned_in.assign(static_cast<size_t>(node.input_size()), false);
    state.pinned_out.assign(static_cast<size_t>(node.output_size()), false);
    for (int j = 0; j < node.input_size(); ++j) {
      const Tensor* tensor = scope.find(node.input(j));
      if (tensor != nullptr && tensor->orig == TensorProto::FLOAT) {
        state.has_float = true;
      }
      if (state.schema != nullptr) {
        state.pinned_in[static_cast<size_t>(j)] = is_pinned_input(*state.schema, node.op_type(), j);
      }
      if (tensor != nullptr && tensor->overflow > 0) {
        state.forced = "overflow";
      }
      // A value no inference could type (an output of a custom-domain op) may well be
      // float32: a lowered node would read it with no Cast, and bind its type parameter
      // to two types. Unknown stays as the model wrote it.
      if (tensor != nullptr && tensor->orig == 0 && !node.input(j).empty() &&
          state.forced.empty()) {
        state.forced = "input_type_unknown";
      }
    }
    for (int j = 0; j < node.output_size(); ++j) {
      const Tensor* tensor = scope.find(node.output(j));
      if (tensor != nullptr && tensor->orig == TensorProto::FLOAT) {
        state.has_float = true;
      }
      if (state.schema != nullptr) {
        state.pinned_out[static_cast<size_t>(j)] =
            is_pinned_output(*state.schema, node.op_type(), j);
      }
      bool io_kept = scope.depth > 0 || options.keep_io_types == KeepIoTypes::yes;
      if (tensor != nullptr && tensor->graph_output && io_kept && state.forced.empty()) {
        state.forced = "graph_output";
      }
    }
    if (!node.domain().empty() && node.domain() != "ai.onnx") {
      state.kept_reason = "other_domain";
    } else if (k_control_flow.count(node.op_type()) != 0) {
      state.kept_reason = "control_flow";
    } else if (never_lowered_ops().count(node.op_type()) != 0) {
      state.kept_reason = "type_from_attribute";
    } else {
      state.op_class = class_for_policy(node, options);
      if (state.op_class == OpClass::deny && options.lowered_nodes.count(node.name()) != 0 &&
          options.user_denied.count(node.op_type()) == 0) {
        state.op_class = OpClass::allow; // the descent measured the target met with it low
      }
    }
    if (!node.name().empty() && options.keep_nodes.count(node.name()) != 0) {
      state.forced = "keep_dtype";
    } else if (!node.name().empty() && options.range_nodes.count(node.name()) != 0) {
      state.forced = "activation_range"; // the high graph's values on the samples
    } else if (!node.name().empty() && options.accuracy_nodes.count(node.name()) != 0) {
      state.forced = "accuracy"; // the repair measured that the target needs it float32
    }
  }
  mark_shape_arithmetic(scope);
  mark_runtime_workarounds(scope);
}

// TF AutoMixedPrecision's deny propagation: deny reaches infer nodes, and clear nodes
// only when they lead (through clear nodes) to an infer or deny node.
void propagate_deny(Scope& scope) {
  auto& graph = *scope.graph;
  const auto n = static_cast<size_t>(graph.node_size());
  std::unordered_map<std::string, std::vector<size_t>> consumers;
  for (size_t i = 0; i < n; ++i) {
    const auto& node = graph.node(static_cast<int>(i));
    for (const auto& input : node.input()) {
      consumers[input].push_back(i);
    }
    for (const auto& name : model::implicit_inputs(node)) {
      consumers[name].push_back(i);
    }
  }
  auto each_consumer = [&](size_t i, const auto& visit) {
    for (const auto& output : graph.node(static_cast<int>(i)).output()) {
      auto it = consumers.find(output);
      if (it != consumers.end()) {
        for (size_t c : it->second) {
          visit(c);
        }
      }
    }
  };
  std::vector<bool> marked(n, false);
  for (size_t k = n; k-- > 0;) {
    OpClass op_class = scope.nodes[k].op_class;
    if (op_class == OpClass::deny || op_class == OpClass::infer) {
      marked[k] = true;
    } else if (op_class == OpClass::clear) {
      each_consumer(k, [&](size_t c) {
        if (marked[c]) {
          marked[k] = true;
        }
      });
    }
  }
  std::deque<size_t> work;
  for (size_t i = 0; i < n; ++i) {
    if (scope.nodes[i].op_class == OpClass::deny) {
      work.push_back(i);
    }
  }
  while (!work.empty()) {
    size_t i = work.front();
    work.pop_front();
    each_consumer(i, [&](size_t c) {
      auto& state = scope.nodes[c];
      if (marked[c] && !state.denied && state.op_class != OpClass::deny &&
          state.op_class != OpClass::allow) {
        state.denied = true;
        work.push_back(c);
      }
    });
  }
}

void try_low(Scope& scope, Context& context, int i) {
  const auto& node = scope.graph->node(i);
  auto& state = scope.nodes[static_cast<size_t>(i)];
  if (state.schema == nullptr) {
    state.kept_reason = "no_schema";
    return;
  }
  if (!context.cast_supports_low) {
    state.kept_reason = "schema";
    return;
  }
  auto proposed = [&](const std::string& name, bool pinned) -> int32_t {
    const Tensor* tensor = scope.find(name);
    if (tensor == nullptr) {
      return 0;
    }
    return tensor->orig == TensorProto::FLOAT && !pinned ? context.low : tensor->orig;
  };
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
  for (int j = 0; j < node.input_size(); ++j) {
    inputs.push_back(node.input(j).empty()
                         ? 0
                         : proposed(node.input(j), state.pinned_in[static_cast<size_t>(j)]));
  }
  for (int j = 0; j < node.output_size(); ++j) {
    outputs.push_back(node.output(j).empty()
                          ? 0
                          : proposed(node.output(j), state.pinned_out[static_cast<size_t>(j)]));
  }
  if (!schema_accepts(*state.schema, inputs, outputs)) {
    state.kept_reason = "schema";
    return;
  }
  state.low = true;
  for (int j = 0; j < node.output_size(); ++j) {
    if (Tensor* tensor = scope.find(node.output(j));
        tensor != nullptr && outputs[static_cast<size_t>(j)] != 0) {
      tensor->final_type = outputs[static_cast<size_t>(j)];
    }
  }
}

bool has_low_input(Scope& scope, Context& context, const onnx::NodeProto& node) {
  for (const auto& input : node.input()) {
    const Tensor* tensor = scope.find(input);
    if (tensor != nullptr && tensor->data == nullptr && tensor->final_type == context.low) {
      return true;
    }
  }
  return false;
}

void decide_nodes(Scope& scope, Context& context) {
  for (int i = 0; i < scope.graph->node_size(); ++i) {
    auto& state = scope.nodes[static_cast<size_t>(i)];
    if (!state.forced.empty()) {
      state.kept_reason = state.forced;
      continue;
    }
    if (!state.kept_reason.empty()) {
      continue;
    }
    if (!state.has_float) {
      state.kept_reason = "no_float";
      continue;
    }
    switch (state.op_class) {
    case OpClass::allow:
      try_low(scope, context, i);
      break;
    case OpClass::deny:
      state.kept_reason = "deny_list";
      break;
    case OpClass::infer:
    case OpClass::clear:
      if (state.denied) {
        state.kept_reason = "deny_propagation";
      } else if (has_low_input(scope, context, scope.graph->node(i))) {
        try_low(scope, context, i);
      } else {
        state.kept_reason = "inputs_float32";
      }
      break;
    case OpClass::none:
      state.kept_reason = "not_listed";
      break;
    }
  }
}

// Softmax and LogSoftmax are deny ops (their exponentials and sums want float32), but one whose
// input is already low and whose every reader is a matrix op running low (attention's
// probabilities, read by the MatMul with V) gains nothing from float32: each reader rounds its
// output to the low type anyway, and runtimes compute the op in float32 inside (ONNX Runtime's
// float16 Softmax does). Such a node runs low, two Casts fewer; its output values are the same
// (a BERT-like encoder in tests/bench/peers: held-out cosine and max abs error unchanged, 4
// nodes fewer float32). A Softmax read by anything else (an output, an Add, a Log) stays, and
// so does one --modify-mixlist put on the black list itself.
const std::set<std::string> k_low_when_read_low = {"Softmax", "LogSoftmax"};

bool read_only_by_low_matrix_ops(Scope& scope, const onnx::NodeProto& node) {
  const auto& graph = *scope.graph;
  int readers = 0;
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& reader = graph.node(i);
    const auto& state = scope.nodes[static_cast<size_t>(i)];
    for (const auto& name : model::implicit_inputs(reader)) {
      if (name == node.output(0)) {
        return false; // a body reads it: its interface keeps its types
      }
    }
    for (int j = 0; j < reader.input_size(); ++j) {
      if (reader.input(j) != node.output(0)) {
        continue;
      }
      if (state.op_class != OpClass::allow || !state.low || state.pinned_in[static_cast<size_t>(j)]) {
        return false;
      }
      ++readers;
    }
  }
  return readers > 0;
}

void lower_softmax_read_low(Scope& scope, Context& context) {
  for (int i = 0; i < scope.graph->node_size(); ++i) {
    const auto& node = scope.graph->node(i);
    auto& state = scope.nodes[static_cast<size_t>(i)];
    if (state.kept_reason != "deny_list" || !node.domain().empty() ||
        k_low_when_read_low.count(node.op_type()) == 0 ||
        context.options->user_denied.count(node.op_type()) != 0 || node.output_size() != 1 ||
        node.input_size() != 1 || !has_low_input(scope, context, node) ||
        !read_only_by_low_matrix_ops(scope, node)) {
      continue;
    }
    state.kept_reason.clear();
    try_low(scope, context, i);
    if (!state.low) {
      state.kept_reason = "deny_list"; // the schema refused the low form: as the list says
    }
  }
}

// Paints one graph: its scope, a child of `parent` (the scope of the graph holding it).
std::unique_ptr<Scope> paint_graph(onnx::GraphProto& graph, Scope* parent, Context& context) {
  auto scope = std::make_unique<Scope>();
  scope->graph = &graph;
  scope->parent = parent;
  scope->depth = parent == nullptr ? 0 : parent->depth + 1;
  register_tensors(*scope, context);
  classify_nodes(*scope, context);
  if (context.options->policy == Policy::mixed) {
    propagate_deny(*scope);
  }
  decide_nodes(*scope, context);
  if (context.options->policy == Policy::mixed) {
    lower_softmax_read_low(*scope, context);
  }
  scope->casts_after.resize(static_cast<size_t>(graph.node_size()));
  return scope;
}

// Paints every graph, outer before inner (a body's decisions read its parents'), into a
// tree of scopes shaped like the nesting of the graphs.
std::unique_ptr<Scope> paint(onnx::GraphProto& graph, Context& context) {
  std::unique_ptr<Scope> root;
  // The walk's state is the scope of the enclosing graph (null for the main graph).
  auto visit = [&](onnx::GraphProto& each, Scope*& parent) {
    auto scope = paint_graph(each, parent, context);
    Scope* painted = scope.get();
    if (parent == nullptr) {
      root = std::move(scope);
    } else {
      parent->children.push_back(std::move(scope));
    }
    parent = painted;
  };
  model::walk_graphs(
      graph, static_cast<Scope*>(nullptr), visit, [](const onnx::GraphProto&, Scope*&) {},
      [](const onnx::NodeProto&, const onnx::GraphProto&, Scope*&) {});
  return root;
}

} // namespace

bool is_low(int32_t elem_type) {
  return elem_type == TensorProto::FLOAT16 || elem_type == TensorProto::BFLOAT16;
}

std::unique_ptr<Scope> build_and_paint(onnx::GraphProto& graph, Context& context) {
  onnx::NodeProto cast;
  cast.set_op_type("Cast");
  const auto* schema = find_schema(cast, *context.model);
  context.cast_supports_low = schema != nullptr &&
                              schema_accepts(*schema, {TensorProto::FLOAT}, {context.low}) &&
                              schema_accepts(*schema, {context.low}, {TensorProto::FLOAT});
  return paint(graph, context);
}

} // namespace npucc::precision::detail
