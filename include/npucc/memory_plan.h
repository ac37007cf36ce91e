#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace npucc {

// One activation placed in the arena; `first` and `last` are node indices in
// topological order (the producer, and the last reader or the end for outputs).
struct PlannedTensor {
  std::string name;
  uint64_t bytes = 0;
  uint64_t offset = 0;
  int first = 0;
  int last = 0;
};

// Where every intermediate tensor of the main graph lives in one arena. Only graphs
// whose activations all have static shapes can be planned (fix dynamic dims with
// --input-shape); otherwise `available` is false and `reason` names a tensor.
struct MemoryPlan {
  bool available = false;
  std::string reason;
  uint64_t alignment = 64;
  uint64_t arena_bytes = 0;       // peak arena size of the greedy assignment
  uint64_t lower_bound_bytes = 0; // most bytes live at any one step: no plan can beat it
  uint64_t unshared_bytes = 0;    // every tensor in its own buffer
  std::vector<PlannedTensor> tensors;
};

// Greedy by size: tensors are placed largest first, each at the lowest offset where
// it overlaps no already placed tensor whose lifetime it shares.
MemoryPlan plan_memory(const onnx::GraphProto& graph);

} // namespace npucc
