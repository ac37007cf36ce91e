#pragma once

#include <cstdint>
#include <onnx/onnx_pb.h>
#include <optional>
#include <string>
#include <vector>

namespace npucc::passes {

// Constant folding only ever handles small tensors: shape arithmetic, never weights
// (folding must not duplicate a weight into a second initializer).
constexpr uint64_t k_max_fold_elements = 64 * 1024;

// A small constant tensor in memory, for the element types folding supports: int64,
// int32 and bool live in `ints`, float32 in `floats`.
struct FoldValue {
  int32_t type = 0;
  std::vector<int64_t> dims;
  std::vector<int64_t> ints;
  std::vector<float> floats;

  bool is_float() const { return type == onnx::TensorProto::FLOAT; }
  size_t size() const { return is_float() ? floats.size() : ints.size(); }
  // The element count the dims declare.
  size_t count() const;
  // Whether the dims (non-negative) declare at most k_max_fold_elements elements; checked
  // dim by dim, so a product that would overflow is refused too.
  bool fits_fold_limit() const;
  // Resizes the storage of the type to `count()` zeros.
  void allocate();
};

// Whether folding handles this element type.
bool is_foldable_type(int32_t type);

// Reads an initializer; nullopt for unsupported types, external or segmented data,
// more than `k_max_fold_elements` elements, or data that does not match the dims.
std::optional<FoldValue> read_fold_value(const onnx::TensorProto& tensor);

// The initializer holding `value`, named `name`.
onnx::TensorProto to_tensor(const FoldValue& value, const std::string& name);

// Evaluates one node on constant inputs (null for an omitted optional input) with the
// semantics of version `version` of its op (the since-version in force, op_version.h);
// nullopt when the op, that version, its types or its attributes are not handled, or
// when the result would be implementation-defined (integer overflow, division by zero,
// an out-of-range index or cast). CastLike's second input is read for its type only: a
// FoldValue of that type without elements may stand in for it.
std::optional<std::vector<FoldValue>> evaluate_node(const onnx::NodeProto& node,
                                                    const std::vector<const FoldValue*>& inputs,
                                                    int version);

// Whether a node belongs to the default ONNX domain.
bool is_onnx_node(const onnx::NodeProto& node);

// The ops evaluate_node knows.
bool is_foldable_op(const std::string& op_type);

} // namespace npucc::passes
