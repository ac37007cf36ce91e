// Phase 2 of the mixed-precision rewrite: what type each input must arrive in, and which
// float32 constants are stored in the low type. A constant converts only when every
// reader wants it low (else it stays float32 and low readers get a shared Cast), it is not
// a master weight, not a graph input or output, and no value would overflow to inf.

#include "model/tensor_info.h"
#include "model/weight_store.h"
#include "precision/float_convert.h"
#include "precision/rewrite_state.h"
#include "precision/schema_check.h"

#include <cstring>

namespace npucc::precision::detail {

namespace {

using onnx::TensorProto;

int32_t wanted_type(Scope& scope, Context& context, const onnx::NodeProto& node,
                    const NodeState& state, int index, const Tensor& tensor) {
  if (state.low && tensor.orig == TensorProto::FLOAT &&
      !state.pinned_in[static_cast<size_t>(index)]) {
    return context.low;
  }
  // A Cast takes its input in any type its schema allows: no need to widen first.
  if (node.op_type() == "Cast" && node.domain().empty() && state.schema != nullptr &&
      input_accepts(*state.schema, index, tensor.final_type)) {
    return tensor.final_type;
  }
  (void)scope;
  return tensor.orig;
}

void record_uses(Scope& scope, Context& context) {
  auto& graph = *scope.graph;
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    auto& state = scope.nodes[static_cast<size_t>(i)];
    state.wanted_in.assign(static_cast<size_t>(node.input_size()), 0);
    for (int j = 0; j < node.input_size(); ++j) {
      Tensor* tensor = scope.find(node.input(j));
      if (tensor == nullptr || tensor->orig == 0) {
        continue;
      }
      int32_t wanted = wanted_type(scope, context, node, state, j, *tensor);
      state.wanted_in[static_cast<size_t>(j)] = wanted;
      if (wanted == context.low && tensor->orig == TensorProto::FLOAT) {
        ++tensor->low_uses;
      } else {
        ++tensor->other_uses;
      }
      if (state.pinned_in[static_cast<size_t>(j)]) {
        ++tensor->pinned_uses;
      }
    }
  }
  for (auto& child : scope.children) {
    record_uses(*child, context);
  }
}

uint64_t float_bytes(const Tensor& tensor) {
  auto count = model::element_count(*tensor.data);
  return count ? *count * sizeof(float) : 0;
}

void decide(Scope& scope, Context& context) {
  auto& report = *context.report;
  for (auto& [name, tensor] : scope.tensors) {
    if (tensor.data == nullptr || tensor.orig != TensorProto::FLOAT) {
      continue;
    }
    bool convertible = !tensor.graph_output && !tensor.overridable && tensor.overflow == 0 &&
                       !tensor.master_weight && !model::is_unloaded_external(*tensor.data);
    if (convertible && tensor.low_uses > 0 && tensor.other_uses == 0) {
      tensor.final_type = context.low;
      continue;
    }
    Float32Constant kept{name, "", tensor.overflow, float_bytes(tensor)};
    if (tensor.overflow > 0) {
      kept.reason = "overflow";
    } else if (tensor.master_weight && tensor.low_uses > 0) {
      kept.reason = "master_weight";
      report.master_weight_bytes += kept.bytes;
    } else if (tensor.low_uses > 0) {
      kept.reason = "shared";
    } else if (tensor.pinned_uses > 0) {
      kept.reason = "schema_input";
    } else {
      kept.reason = "consumers_float32";
    }
    report.float32_constants.push_back(std::move(kept));
  }
  for (auto& child : scope.children) {
    decide(*child, context);
  }
}

std::vector<float> float_values(const TensorProto& tensor) {
  std::vector<float> values;
  if (auto raw = model::raw_bytes(tensor)) {
    values.resize(raw->size() / sizeof(float));
    std::memcpy(values.data(), raw->data(), values.size() * sizeof(float));
  } else {
    values.assign(tensor.float_data().begin(), tensor.float_data().end());
  }
  return values;
}

void convert(TensorProto& tensor, int32_t low) {
  std::vector<float> values = float_values(tensor);
  std::vector<uint16_t> bits(values.size());
  if (low == TensorProto::FLOAT16) {
    npucc::precision::float_to_half(values.data(), bits.data(), values.size());
  } else {
    npucc::precision::float_to_bfloat16(values.data(), bits.data(), values.size());
  }
  std::string raw(values.size() * sizeof(uint16_t), '\0');
  std::memcpy(raw.data(), bits.data(), raw.size());
  tensor.clear_float_data();
  tensor.set_data_type(low);
  model::replace_bytes(tensor, std::move(raw));
}

void convert_in(Scope& scope, Context& context) {
  auto& report = *context.report;
  for (auto& [name, tensor] : scope.tensors) {
    if (tensor.data == nullptr || tensor.orig != TensorProto::FLOAT ||
        tensor.final_type != context.low) {
      continue;
    }
    uint64_t bytes = float_bytes(tensor);
    convert(*tensor.data, context.low);
    ++report.constants_converted;
    report.converted_bytes_before += bytes;
    report.converted_bytes_after += bytes / 2;
  }
  for (auto& child : scope.children) {
    convert_in(*child, context);
  }
}

} // namespace

void decide_constants(Scope& root, Context& context) {
  record_uses(root, context);
  decide(root, context);
}

void convert_constants(Scope& root, Context& context) {
  convert_in(root, context);
}

} // namespace npucc::precision::detail
