#include "passes/fuse_hard_activations.h"

#include "model/graph_walk.h"
#include "opset/raise_opset.h"
#include "passes/fold_ops.h"
#include "passes/fold_values.h"
#include "passes/node_rewriter.h"
#include "passes/op_version.h"
#include "passes/rename.h"

#include <cmath>
#include <optional>
#include <unordered_map>

namespace npucc::passes {

namespace {

// The versions whose definitions the matcher implements: numpy broadcasting for the
// binary ops (from 7), Clip's bounds as attributes (6) or inputs (11 on), two-input Min/Max.
constexpr std::initializer_list<int> k_binary = {7, 13, 14};
constexpr std::initializer_list<int> k_clip = {6, 11, 12, 13};
constexpr std::initializer_list<int> k_relu = {6, 13, 14};
constexpr std::initializer_list<int> k_min_max = {8, 12, 13};
constexpr std::initializer_list<int> k_hard_sigmoid = {6, 22};
constexpr int k_hard_swish_opset = 14;
constexpr int k_hard_sigmoid_opset = 6;
constexpr float k_sixth = 1.0F / 6.0F;

// 0, 0.5, 3 and 6 are exact in float32; 1/6 is not, and exporters write it as float32's
// nearest (0.16666667) or rounded in a text format (0.1666667).
bool near(float value, float want) {
  if (want != k_sixth) {
    return value == want;
  }
  return std::fabs(value - want) <= 1e-6F * want;
}

// One form found: the value it computes the activation of, and its nodes, final one last.
struct Match {
  std::string x;
  std::vector<int> nodes;
};

// What matching needs to know about one graph, kept current while forms are replaced.
class Forms {
public:
  Forms(onnx::GraphProto& graph, const GraphContext& context, const std::set<std::string>& keep)
      : m_graph(graph), m_context(context), m_keep(keep), m_rewriter(graph) {
    for (int i = 0; i < graph.node_size(); ++i) {
      for (const auto& output : graph.node(i).output()) {
        m_producer[output] = i;
      }
    }
    count_reads();
    std::unordered_set<std::string> overridable;
    for (const auto& input : graph.input()) {
      overridable.insert(input.name());
    }
    for (const auto& tensor : graph.initializer()) {
      if (overridable.count(tensor.name()) == 0) {
        m_initializers[tensor.name()] = &tensor;
      }
    }
  }

  // Whether node `index` may take part in a form: a default-domain op of a checked version,
  // not yet replaced, not pinned by --keep-dtype.
  bool usable(int index, const std::string& op, std::initializer_list<int> versions) const {
    const auto& node = m_graph.node(index);
    return !m_rewriter.is_edited(index) && node.op_type() == op &&
           version_is_one_of(node, m_context.model, versions) && m_keep.count(node.name()) == 0;
  }

  // The node producing `value` inside a form: usable, one output, read by one node only.
  std::optional<int> interior(const std::string& value, const std::string& op,
                              std::initializer_list<int> versions) const {
    auto it = m_producer.find(value);
    if (it == m_producer.end() || !usable(it->second, op, versions) ||
        m_graph.node(it->second).output_size() != 1) {
      return std::nullopt;
    }
    auto reads = m_reads.find(value);
    if (reads == m_reads.end() || reads->second != 1) {
      return std::nullopt;
    }
    return it->second;
  }

  // The value of a float32 scalar constant `name` that broadcasts against `x` to x's shape.
  std::optional<float> scalar(const std::string& name, const std::string& x) const {
    const onnx::TensorProto* tensor = constant_tensor(name);
    if (tensor == nullptr) {
      return std::nullopt;
    }
    auto value = read_fold_value(*tensor);
    if (!value || !value->is_float() || value->floats.size() != 1) {
      return std::nullopt;
    }
    if (tensor->dims_size() > 0) {
      const auto* shape = m_context.shape(x);
      if (shape == nullptr || static_cast<int>(shape->size()) < tensor->dims_size()) {
        return std::nullopt;
      }
    }
    return value->floats[0];
  }

  // For a two-input node with a scalar constant near `constant` at one of `slots`: the other
  // input.
  std::optional<std::string> operand_besides(int index, float constant,
                                             std::initializer_list<int> slots = {0, 1}) const {
    const auto& node = m_graph.node(index);
    if (node.input_size() != 2) {
      return std::nullopt;
    }
    for (int slot : slots) {
      const std::string& other = node.input(1 - slot);
      auto value = scalar(node.input(slot), other);
      if (value && near(*value, constant)) {
        return other;
      }
    }
    return std::nullopt;
  }

  const onnx::NodeProto& node(int index) const { return m_graph.node(index); }

  // Puts `op` (reading m.x) in the place of the form's final node; the others go.
  void replace(const Match& match, const std::string& op) {
    const int last = match.nodes.back();
    onnx::NodeProto fused;
    fused.set_op_type(op);
    fused.set_name(m_graph.node(last).name());
    fused.add_input(match.x);
    fused.add_output(m_graph.node(last).output(0));
    if (op == "HardSigmoid") {
      auto* alpha = fused.add_attribute();
      alpha->set_name("alpha");
      alpha->set_type(onnx::AttributeProto::FLOAT);
      alpha->set_f(k_sixth);
      auto* beta = fused.add_attribute();
      beta->set_name("beta");
      beta->set_type(onnx::AttributeProto::FLOAT);
      beta->set_f(0.5F);
    }
    for (int index : match.nodes) {
      auto& node = *m_graph.mutable_node(index);
      for (const auto& input : node.input()) {
        m_maybe_unread.insert(input);
      }
      if (index != last) {
        m_gone.insert(node.output().begin(), node.output().end());
        node.clear_output();
        m_rewriter.remove(index);
      }
    }
    *m_graph.mutable_node(last) = std::move(fused);
  }

  // Removes the replaced nodes, and the constants and value_info nothing reads any more.
  void finish() {
    count_reads();
    for (const auto& name : m_maybe_unread) {
      if (m_reads.count(name) != 0) {
        continue;
      }
      auto producer = m_producer.find(name);
      if (producer != m_producer.end() && m_graph.node(producer->second).op_type() == "Constant") {
        m_rewriter.remove(producer->second);
        m_gone.insert(name);
      } else if (m_initializers.count(name) != 0) {
        m_unread_initializers.insert(name);
        m_gone.insert(name);
      }
    }
    auto* initializers = m_graph.mutable_initializer();
    for (int i = initializers->size() - 1; i >= 0; --i) {
      if (m_unread_initializers.count(initializers->Get(i).name()) != 0) {
        initializers->DeleteSubrange(i, 1);
      }
    }
    m_rewriter.apply();
    drop_value_info(m_graph, m_gone);
  }

private:
  // Reads by live nodes, by the bodies they hold, and as graph outputs.
  void count_reads() {
    m_reads.clear();
    for (int i = 0; i < m_graph.node_size(); ++i) {
      if (m_rewriter.is_edited(i)) {
        continue;
      }
      const auto& node = m_graph.node(i);
      for (const auto& input : node.input()) {
        ++m_reads[input];
      }
      for (const auto& name : model::implicit_inputs(node)) {
        ++m_reads[name];
      }
    }
    for (const auto& output : m_graph.output()) {
      ++m_reads[output.name()];
    }
  }

  const onnx::TensorProto* constant_tensor(const std::string& name) const {
    auto init = m_initializers.find(name);
    if (init != m_initializers.end()) {
      return init->second;
    }
    auto it = m_producer.find(name);
    if (it == m_producer.end() || m_rewriter.is_edited(it->second)) {
      return nullptr;
    }
    const auto& node = m_graph.node(it->second);
    if (node.op_type() != "Constant" || !is_onnx_node(node) || node.attribute_size() != 1 ||
        node.attribute(0).name() != "value") {
      return nullptr;
    }
    return &node.attribute(0).t();
  }

  onnx::GraphProto& m_graph;
  const GraphContext& m_context;
  const std::set<std::string>& m_keep;
  NodeRewriter m_rewriter;
  std::unordered_map<std::string, int> m_producer;
  std::unordered_map<std::string, int> m_reads;
  std::unordered_map<std::string, const onnx::TensorProto*> m_initializers;
  std::unordered_set<std::string> m_maybe_unread;
  std::unordered_set<std::string> m_unread_initializers;
  std::unordered_set<std::string> m_gone;
};

// A float attribute's value; `fallback` when it is absent or of another type.
float float_attribute(const onnx::NodeProto& node, const std::string& name, float fallback) {
  const onnx::AttributeProto* attribute = fold::find_attribute(node, name);
  return attribute != nullptr && attribute->type() == onnx::AttributeProto::FLOAT ? attribute->f()
                                                                                  : fallback;
}

bool has_float_attribute(const onnx::NodeProto& node, const std::string& name) {
  const onnx::AttributeProto* attribute = fold::find_attribute(node, name);
  return attribute != nullptr && attribute->type() == onnx::AttributeProto::FLOAT;
}

// Clip(t, 0, 6): bounds as attributes (Clip-6) or constant inputs (Clip-11 on).
std::optional<Match> clip_0_6(const Forms& forms, int index) {
  const auto& clip = forms.node(index);
  const std::string& t = clip.input(0);
  if (clip.input_size() == 1) {
    if (has_float_attribute(clip, "min") && has_float_attribute(clip, "max") &&
        near(float_attribute(clip, "min", 1), 0.0F) &&
        near(float_attribute(clip, "max", 0), 6.0F)) {
      return Match{t, {index}};
    }
    return std::nullopt;
  }
  if (clip.input_size() != 3 || clip.attribute_size() != 0) {
    return std::nullopt;
  }
  auto low = forms.scalar(clip.input(1), t);
  auto high = forms.scalar(clip.input(2), t);
  if (low && high && near(*low, 0.0F) && near(*high, 6.0F)) {
    return Match{t, {index}};
  }
  return std::nullopt;
}

// relu6(t) computing `value`: Clip(t, 0, 6), Min(Relu(t), 6), Min(Max(t, 0), 6),
// Max(Min(t, 6), 0) or Relu(Min(t, 6)).
std::optional<Match> relu6(const Forms& forms, const std::string& value) {
  if (auto clip = forms.interior(value, "Clip", k_clip)) {
    return clip_0_6(forms, *clip);
  }
  if (auto min = forms.interior(value, "Min", k_min_max)) {
    auto a = forms.operand_besides(*min, 6.0F);
    if (!a) {
      return std::nullopt;
    }
    if (auto relu = forms.interior(*a, "Relu", k_relu)) {
      return Match{forms.node(*relu).input(0), {*relu, *min}};
    }
    if (auto max = forms.interior(*a, "Max", k_min_max)) {
      if (auto t = forms.operand_besides(*max, 0.0F)) {
        return Match{*t, {*max, *min}};
      }
    }
    return std::nullopt;
  }
  std::optional<int> outer = forms.interior(value, "Max", k_min_max);
  std::optional<std::string> a = outer ? forms.operand_besides(*outer, 0.0F) : std::nullopt;
  if (!outer) {
    outer = forms.interior(value, "Relu", k_relu);
    if (outer) {
      a = forms.node(*outer).input(0);
    }
  }
  if (!outer || !a) {
    return std::nullopt;
  }
  if (auto min = forms.interior(*a, "Min", k_min_max)) {
    if (auto t = forms.operand_besides(*min, 6.0F)) {
      return Match{*t, {*min, *outer}};
    }
  }
  return std::nullopt;
}

// relu6(x + 3) computing `value`.
std::optional<Match> relu6_of_x_plus_3(const Forms& forms, const std::string& value) {
  auto clipped = relu6(forms, value);
  if (!clipped) {
    return std::nullopt;
  }
  auto add = forms.interior(clipped->x, "Add", k_binary);
  auto x = add ? forms.operand_besides(*add, 3.0F) : std::nullopt;
  if (!x) {
    return std::nullopt;
  }
  Match out{*x, {*add}};
  out.nodes.insert(out.nodes.end(), clipped->nodes.begin(), clipped->nodes.end());
  return out;
}

// v / 6 at node `index` (Div by 6, or Mul by 1/6 either way round): v.
std::optional<std::string> divided_by_6(const Forms& forms, int index) {
  if (forms.usable(index, "Div", k_binary)) {
    return forms.operand_besides(index, 6.0F, {1});
  }
  if (forms.usable(index, "Mul", k_binary)) {
    return forms.operand_besides(index, k_sixth);
  }
  return std::nullopt;
}

// relu6(x + 3) / 6 ending at node `index`.
std::optional<Match> hard_sigmoid_form(const Forms& forms, int index) {
  auto v = divided_by_6(forms, index);
  auto inner = v ? relu6_of_x_plus_3(forms, *v) : std::nullopt;
  if (!inner) {
    return std::nullopt;
  }
  inner->nodes.push_back(index);
  return inner;
}

// x * HardSigmoid<1/6, 0.5>(x), x * (relu6(x + 3) / 6) or (x * relu6(x + 3)) / 6, ending at
// node `index`.
std::optional<Match> hard_swish_form(const Forms& forms, int index) {
  if (forms.usable(index, "Mul", k_binary) && forms.node(index).input_size() == 2) {
    for (int slot : {0, 1}) {
      const std::string& x = forms.node(index).input(slot);
      const std::string& gate = forms.node(index).input(1 - slot);
      if (auto hs = forms.interior(gate, "HardSigmoid", k_hard_sigmoid)) {
        const auto& node = forms.node(*hs);
        if (node.input(0) == x && near(float_attribute(node, "alpha", 0.2F), k_sixth) &&
            near(float_attribute(node, "beta", 0.5F), 0.5F)) {
          return Match{x, {*hs, index}};
        }
      }
      for (const char* op : {"Div", "Mul"}) {
        auto divide = forms.interior(gate, op, k_binary);
        auto inner = divide ? hard_sigmoid_form(forms, *divide) : std::nullopt;
        if (inner && inner->x == x) {
          inner->nodes.push_back(index);
          return inner;
        }
      }
    }
  }
  auto product = divided_by_6(forms, index);
  auto mul = product ? forms.interior(*product, "Mul", k_binary) : std::nullopt;
  if (!mul || forms.node(*mul).input_size() != 2) {
    return std::nullopt;
  }
  for (int slot : {0, 1}) {
    auto inner = relu6_of_x_plus_3(forms, forms.node(*mul).input(1 - slot));
    if (inner && inner->x == forms.node(*mul).input(slot)) {
      inner->nodes.push_back(*mul);
      inner->nodes.push_back(index);
      return inner;
    }
  }
  return std::nullopt;
}

} // namespace

int64_t FuseHardActivations::run_on_graph(onnx::GraphProto& graph, const GraphContext& context) {
  const int64_t opset = context.model == nullptr ? 0 : opset::default_opset(*context.model);
  if (opset < k_hard_sigmoid_opset) {
    return 0;
  }
  Forms forms(graph, context, m_keep_nodes);
  int64_t count = 0;
  // HardSwish first, so that the relu6(x + 3) / 6 inside one is not taken for a HardSigmoid.
  if (opset >= k_hard_swish_opset) {
    for (int i = 0; i < graph.node_size(); ++i) {
      if (auto match = hard_swish_form(forms, i)) {
        forms.replace(*match, "HardSwish");
        ++m_fused["HardSwish"];
        ++count;
      }
    }
  }
  for (int i = 0; i < graph.node_size(); ++i) {
    if (auto match = hard_sigmoid_form(forms, i)) {
      forms.replace(*match, "HardSigmoid");
      ++m_fused["HardSigmoid"];
      ++count;
    }
  }
  if (count > 0) {
    forms.finish();
  }
  return count;
}

} // namespace npucc::passes
