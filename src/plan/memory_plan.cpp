#include "npucc/memory_plan.h"

#include "model/graph_walk.h"
#include "model/tensor_info.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace npucc {

namespace {

// Past this many tensors the quadratic largest-first placement gives way to an
// O(n log n) one, so a graph of millions of nodes plans in seconds.
constexpr size_t k_max_exact_tensors = 8192;

// No device holds a tensor this large; a model claiming one is damaged or hostile,
// and refusing it keeps every sum below far from overflowing.
constexpr uint64_t k_max_plannable_bytes = uint64_t{1} << 40;

uint64_t align_up(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

uint64_t slot_bytes(const PlannedTensor& tensor, uint64_t alignment) {
  return align_up(std::max<uint64_t>(tensor.bytes, 1), alignment);
}

// Greedy by size, ties broken by earlier birth so the result is deterministic: each
// tensor goes to the lowest offset free of every placed tensor whose lifetime it shares.
void place_largest_first(MemoryPlan& plan) {
  std::vector<size_t> order(plan.tensors.size());
  for (size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const auto& ta = plan.tensors[a];
    const auto& tb = plan.tensors[b];
    return ta.bytes != tb.bytes ? ta.bytes > tb.bytes : ta.first < tb.first;
  });
  std::vector<size_t> placed;
  for (size_t index : order) {
    auto& tensor = plan.tensors[index];
    uint64_t size = slot_bytes(tensor, plan.alignment);
    std::vector<std::pair<uint64_t, uint64_t>> busy; // [offset, end) of overlapping lifetimes
    for (size_t other_index : placed) {
      const auto& other = plan.tensors[other_index];
      if (other.first <= tensor.last && tensor.first <= other.last) {
        busy.emplace_back(other.offset, other.offset + slot_bytes(other, plan.alignment));
      }
    }
    std::sort(busy.begin(), busy.end());
    uint64_t offset = 0;
    for (const auto& [begin, end] : busy) {
      if (offset + size <= begin) {
        break;
      }
      offset = std::max(offset, end);
    }
    tensor.offset = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, offset + size);
    placed.push_back(index);
  }
}

// Linear scan in execution order: a tensor takes the smallest freed block it fits
// (best fit), else the top of the arena; blocks are freed after their last reader
// and merged with free neighbours.
void place_in_time_order(MemoryPlan& plan) {
  const size_t count = plan.tensors.size();
  std::vector<size_t> by_first(count);
  for (size_t i = 0; i < count; ++i) {
    by_first[i] = i;
  }
  std::vector<size_t> by_last = by_first;
  std::stable_sort(by_first.begin(), by_first.end(), [&](size_t a, size_t b) {
    return plan.tensors[a].first < plan.tensors[b].first;
  });
  std::stable_sort(by_last.begin(), by_last.end(),
                   [&](size_t a, size_t b) { return plan.tensors[a].last < plan.tensors[b].last; });
  std::set<std::pair<uint64_t, uint64_t>> free_by_size; // (bytes, offset)
  std::map<uint64_t, uint64_t> free_by_offset;          // offset -> bytes
  uint64_t top = 0;
  auto release = [&](uint64_t offset, uint64_t bytes) {
    auto next = free_by_offset.find(offset + bytes);
    if (next != free_by_offset.end()) {
      bytes += next->second;
      free_by_size.erase({next->second, next->first});
      free_by_offset.erase(next);
    }
    auto after = free_by_offset.lower_bound(offset);
    if (after != free_by_offset.begin()) {
      auto previous = std::prev(after);
      if (previous->first + previous->second == offset) {
        offset = previous->first;
        bytes += previous->second;
        free_by_size.erase({previous->second, previous->first});
        free_by_offset.erase(previous);
      }
    }
    if (offset + bytes == top) {
      top = offset;
      return;
    }
    free_by_offset[offset] = bytes;
    free_by_size.insert({bytes, offset});
  };
  size_t released = 0;
  for (size_t index : by_first) {
    auto& tensor = plan.tensors[index];
    while (released < count && plan.tensors[by_last[released]].last < tensor.first) {
      const auto& done = plan.tensors[by_last[released]];
      release(done.offset, slot_bytes(done, plan.alignment));
      ++released;
    }
    uint64_t size = slot_bytes(tensor, plan.alignment);
    auto fit = free_by_size.lower_bound({size, 0});
    if (fit != free_by_size.end()) {
      auto [bytes, offset] = *fit;
      free_by_size.erase(fit);
      free_by_offset.erase(offset);
      tensor.offset = offset;
      if (bytes > size) {
        free_by_offset[offset + size] = bytes - size;
        free_by_size.insert({bytes - size, offset + size});
      }
    } else {
      tensor.offset = top;
      top += size;
    }
    plan.arena_bytes = std::max(plan.arena_bytes, top);
  }
}

// Static byte size of a value, or 0 with `why` set when it has none.
uint64_t static_bytes(const onnx::ValueInfoProto* value, std::string& why) {
  if (value == nullptr || !value->type().has_tensor_type()) {
    why = "has no inferred tensor type";
    return 0;
  }
  const auto& tensor = value->type().tensor_type();
  uint64_t element = model::element_size(tensor.elem_type());
  if (element == 0) {
    why = "has element type " + model::dtype_name(tensor.elem_type()) + " with no fixed size";
    return 0;
  }
  if (!tensor.has_shape()) {
    why = "has an unknown rank";
    return 0;
  }
  uint64_t bytes = element;
  for (const auto& dim : tensor.shape().dim()) {
    if (!dim.has_dim_value() || dim.dim_value() < 0) {
      why = "has a dynamic dimension" +
            (dim.has_dim_param() ? " \"" + dim.dim_param() + "\"" : std::string());
      return 0;
    }
    auto next = model::checked_mul(bytes, static_cast<uint64_t>(dim.dim_value()));
    if (!next) {
      why = "has a size that overflows";
      return 0;
    }
    bytes = *next;
  }
  if (bytes > k_max_plannable_bytes) {
    why = "claims " + std::to_string(bytes) + " bytes, more than any device holds";
    return 0;
  }
  return bytes;
}

} // namespace

MemoryPlan plan_memory(const onnx::GraphProto& graph) {
  MemoryPlan plan;
  std::unordered_map<std::string, const onnx::ValueInfoProto*> infos;
  for (const auto& value : graph.value_info()) {
    infos[value.name()] = &value;
  }
  for (const auto& value : graph.output()) {
    infos[value.name()] = &value;
  }
  const int n = graph.node_size();
  std::unordered_map<std::string, size_t> index_of;
  for (int i = 0; i < n; ++i) {
    for (const auto& name : graph.node(i).output()) {
      if (name.empty()) {
        continue;
      }
      std::string why;
      auto it = infos.find(name);
      uint64_t bytes = static_bytes(it == infos.end() ? nullptr : it->second, why);
      if (bytes == 0 && !why.empty()) {
        plan.reason =
            "tensor \"" + name + "\" " + why +
            (why.rfind("has a dynamic", 0) == 0 ? "; fix dynamic dims with --input-shape" : "");
        return plan;
      }
      index_of[name] = plan.tensors.size();
      plan.tensors.push_back({name, bytes, 0, i, i});
    }
  }
  auto touch = [&](const std::string& name, int step) {
    auto it = index_of.find(name);
    if (it != index_of.end()) {
      plan.tensors[it->second].last = std::max(plan.tensors[it->second].last, step);
    }
  };
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

  if (plan.tensors.size() <= k_max_exact_tensors) {
    place_largest_first(plan);
  } else {
    place_in_time_order(plan);
  }
  for (const auto& tensor : plan.tensors) {
    plan.unshared_bytes += slot_bytes(tensor, plan.alignment);
  }
  // Lower bound: the most bytes alive at one step.
  std::map<int, int64_t> delta;
  for (const auto& tensor : plan.tensors) {
    int64_t size = static_cast<int64_t>(slot_bytes(tensor, plan.alignment));
    delta[tensor.first] += size;
    delta[tensor.last + 1] -= size;
  }
  int64_t live = 0;
  for (const auto& [step, change] : delta) {
    live += change;
    plan.lower_bound_bytes =
        std::max<uint64_t>(plan.lower_bound_bytes, static_cast<uint64_t>(live));
  }
  plan.available = true;
  return plan;
}

} // namespace npucc
