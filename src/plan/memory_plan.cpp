#include "npucc/memory_plan.h"

#include "model/graph_walk.h"
#include "model/tensor_info.h"
#include "plan/interval_index.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace npucc {

namespace {

// No single activation can be planned past this (1 PiB); keeps every sum below in range
// for any realistic tensor count, and sums saturate beyond that.
constexpr uint64_t k_max_plannable_bytes = uint64_t{1} << 50;

uint64_t align_up(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

uint64_t saturating_add(uint64_t a, uint64_t b) {
  uint64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

// Static byte size of a value, or 0 with `why` set when it has none.
uint64_t static_bytes(const onnx::ValueInfoProto* value, std::string& why) {
  if (value == nullptr || value->type().value_case() == onnx::TypeProto::VALUE_NOT_SET) {
    why = "has no inferred tensor type";
    return 0;
  }
  if (!value->type().has_tensor_type()) {
    // Sequences (SplitToSequence, ConcatFromSequence's inputs), optionals (Optional*-18),
    // maps and sparse tensors: their size is only known once they are built.
    const char* kind = value->type().has_sequence_type()   ? "a sequence"
                       : value->type().has_optional_type() ? "an optional"
                       : value->type().has_map_type()      ? "a map"
                                                           : "not a dense tensor";
    why = std::string("is ") + kind + ", whose size is known only at run time";
    return 0;
  }
  const auto& tensor = value->type().tensor_type();
  if (model::element_bits(tensor.elem_type()) == 0) {
    why = "has element type " + model::dtype_name(tensor.elem_type()) + " with no fixed size";
    return 0;
  }
  if (!tensor.has_shape()) {
    why = "has an unknown rank";
    return 0;
  }
  uint64_t count = 1;
  for (const auto& dim : tensor.shape().dim()) {
    if (!dim.has_dim_value() || dim.dim_value() < 0) {
      why = "has a dynamic dimension" +
            (dim.has_dim_param() ? " \"" + dim.dim_param() + "\"" : std::string());
      return 0;
    }
    auto next = model::checked_mul(count, static_cast<uint64_t>(dim.dim_value()));
    if (!next) {
      why = "has a size that overflows";
      return 0;
    }
    count = *next;
  }
  // Packed types (int4, int2, float4e2m1) take a byte per two or four elements, rounded up.
  auto packed = model::bytes_for(tensor.elem_type(), count);
  if (!packed) {
    why = "has a size that overflows";
    return 0;
  }
  uint64_t bytes = *packed;
  if (bytes > k_max_plannable_bytes) {
    why = "has " + std::to_string(bytes) + " bytes, too large to plan";
    return 0;
  }
  return bytes;
}

// What the user can do about a tensor without a static size: a dim named after an
// input's symbolic dim goes away with --input-shape; once every input is static, what
// is left is shape inference's limit (a shape computed from values at run time).
std::string unavailable_hint(const onnx::GraphProto& graph, const std::string& dim_param) {
  std::unordered_map<std::string, std::string> param_owner;
  std::vector<std::string> dynamic_inputs;
  for (const auto& input : graph.input()) {
    const auto& type = input.type().tensor_type();
    bool is_static = input.type().has_tensor_type() && type.has_shape();
    for (const auto& dim : type.shape().dim()) {
      is_static = is_static && dim.has_dim_value();
      if (dim.has_dim_param()) {
        param_owner.emplace(dim.dim_param(), input.name());
      }
    }
    bool is_initializer = false;
    for (const auto& tensor : graph.initializer()) {
      is_initializer = is_initializer || tensor.name() == input.name();
    }
    if (!is_static && !is_initializer) {
      dynamic_inputs.push_back(input.name());
    }
  }
  auto owner = param_owner.find(dim_param);
  if (!dim_param.empty() && owner != param_owner.end()) {
    return "it comes from input \"" + owner->second + "\"; fix it with --input-shape";
  }
  if (!dynamic_inputs.empty()) {
    return "input \"" + dynamic_inputs.front() +
           "\" is still dynamic; fix dynamic dims with --input-shape";
  }
  return "shape inference could not resolve it although every input is static "
         "(a shape computed from values known only at run time)";
}

// Why `name` (described by `info`, if anything) stops the plan, with what to do about it.
std::string unavailable_reason(const onnx::GraphProto& graph, const std::string& name,
                               const onnx::ValueInfoProto* info, const std::string& why) {
  std::string reason = "tensor \"" + name + "\" " + why;
  // A sequence or an optional stays one whatever the inputs: no hint for those.
  if (info != nullptr && info->type().value_case() != onnx::TypeProto::VALUE_NOT_SET &&
      !info->type().has_tensor_type()) {
    return reason;
  }
  std::string param; // the first symbolic dim, named or not
  if (info != nullptr) {
    for (const auto& dim : info->type().tensor_type().shape().dim()) {
      if (!dim.has_dim_value()) {
        param = dim.dim_param();
        break;
      }
    }
  }
  return reason + "; " + unavailable_hint(graph, param);
}
// Every output of the main graph's nodes, with the node that makes it; false (and
// plan.reason set) at the first one whose size is not static.
bool collect_tensors(const onnx::GraphProto& graph, MemoryPlan& plan,
                     std::unordered_map<std::string, size_t>& index_of) {
  std::unordered_map<std::string, const onnx::ValueInfoProto*> infos;
  for (const auto& value : graph.value_info()) {
    infos[value.name()] = &value;
  }
  for (const auto& value : graph.output()) {
    infos[value.name()] = &value;
  }
  for (int i = 0; i < graph.node_size(); ++i) {
    for (const auto& name : graph.node(i).output()) {
      if (name.empty()) {
        continue;
      }
      std::string why;
      auto it = infos.find(name);
      uint64_t bytes = static_bytes(it == infos.end() ? nullptr : it->second, why);
      if (bytes == 0 && !why.empty()) {
        plan.reason =
            unavailable_reason(graph, name, it == infos.end() ? nullptr : it->second, why);
        return false;
      }
      index_of[name] = plan.tensors.size();
      plan.tensors.push_back({name, bytes, 0, i, i});
    }
  }
  return true;
}

// Extends each tensor's lifetime to its last reader (graph outputs: to the end).
void extend_lifetimes(const onnx::GraphProto& graph, MemoryPlan& plan,
                      const std::unordered_map<std::string, size_t>& index_of) {
  auto touch = [&](const std::string& name, int step) {
    auto it = index_of.find(name);
    if (it != index_of.end()) {
      plan.tensors[it->second].last = std::max(plan.tensors[it->second].last, step);
    }
  };
  const int n = graph.node_size();
  for (int i = 0; i < n; ++i) {
    for (const auto& name : graph.node(i).input()) {
      touch(name, i);
    }
    for (const auto& name : model::implicit_inputs(graph.node(i))) {
      touch(name, i);
    }
  }
  for (const auto& output : graph.output()) {
    touch(output.name(), n);
  }
}

uint64_t aligned_size(const PlannedTensor& tensor, uint64_t alignment) {
  return align_up(std::max<uint64_t>(tensor.bytes, 1), alignment);
}

// Greedy by size, ties broken by earlier birth so the result is deterministic.
void place_tensors(MemoryPlan& plan, int steps) {
  std::vector<size_t> order(plan.tensors.size());
  for (size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const auto& ta = plan.tensors[a];
    const auto& tb = plan.tensors[b];
    return ta.bytes != tb.bytes ? ta.bytes > tb.bytes : ta.first < tb.first;
  });
  plan::IntervalIndex placed(steps);
  for (size_t index : order) {
    auto& tensor = plan.tensors[index];
    uint64_t size = aligned_size(tensor, plan.alignment);
    std::vector<std::pair<uint64_t, uint64_t>> busy; // [offset, end) of overlapping lifetimes
    placed.overlapping(tensor.first, tensor.last, [&](size_t other_index) {
      const auto& other = plan.tensors[other_index];
      busy.emplace_back(other.offset,
                        saturating_add(other.offset, aligned_size(other, plan.alignment)));
    });
    std::sort(busy.begin(), busy.end());
    uint64_t offset = 0;
    for (const auto& [begin, end] : busy) {
      if (saturating_add(offset, size) <= begin) {
        break;
      }
      offset = std::max(offset, end);
    }
    tensor.offset = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, saturating_add(offset, size));
    plan.unshared_bytes = saturating_add(plan.unshared_bytes, size);
    placed.insert(tensor.first, tensor.last, index);
  }
}

// The most bytes alive at one step: no plan can beat it.
uint64_t lower_bound_bytes(const MemoryPlan& plan) {
  std::map<int, int64_t> delta;
  for (const auto& tensor : plan.tensors) {
    int64_t size = static_cast<int64_t>(aligned_size(tensor, plan.alignment));
    delta[tensor.first] += size;
    delta[tensor.last + 1] -= size;
  }
  uint64_t most = 0;
  int64_t live = 0;
  for (const auto& [step, change] : delta) {
    if (__builtin_add_overflow(live, change, &live)) {
      live = INT64_MAX; // only reachable with millions of petabyte tensors; saturate
    }
    most = std::max<uint64_t>(most, static_cast<uint64_t>(live));
  }
  return most;
}

} // namespace

MemoryPlan plan_memory(const onnx::GraphProto& graph) {
  MemoryPlan plan;
  std::unordered_map<std::string, size_t> index_of;
  if (!collect_tensors(graph, plan, index_of)) {
    return plan;
  }
  extend_lifetimes(graph, plan, index_of);
  place_tensors(plan, graph.node_size());
  plan.lower_bound_bytes = lower_bound_bytes(plan);
  plan.available = true;
  return plan;
}

} // namespace npucc
