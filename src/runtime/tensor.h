#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

// Tensors as they go into and come out of a runtime: a name, an ONNX element type
// (onnx::TensorProto_DataType: ONNX Runtime's ONNXTensorElementDataType has the same
// numbers), a shape and the little-endian bytes, densely packed.
namespace npucc::runtime {

struct Tensor {
  std::string name;
  int32_t type = 0;
  std::vector<int64_t> shape;
  std::string bytes;
};

// One run's inputs (or outputs), by name, in the graph's order.
using TensorSet = std::vector<Tensor>;

// A tensor's bytes where they already are (an ONNX Runtime output, a Tensor), not copied:
// what a fold inside the runtime process reads (runtime.h, PairFold).
struct TensorView {
  std::string_view name;
  int32_t type = 0;
  std::vector<int64_t> shape;
  std::string_view bytes;
};

TensorView view_of(const Tensor& tensor);
// A copy of the viewed tensor.
Tensor copy_of(const TensorView& view);

// Bytes per element of `type`; 0 for types a runtime run does not carry (strings, the
// sub-byte types).
size_t element_size(int32_t type);
// The number of elements of `shape` (1 for a scalar).
int64_t element_count(const std::vector<int64_t>& shape);
// Whether `type` is a floating-point type (float, double, float16, bfloat16).
bool is_float_type(int32_t type);
// "float32", "int64", ...: how messages name an element type.
std::string type_name(int32_t type);
// "float32[1,3,48,192]": how messages name a tensor's type and shape.
std::string describe(int32_t type, const std::vector<int64_t>& shape);

// The wire form of tensor sets between npucc and its runtime process, after `prefix` (a
// reply's status byte: one buffer, not a copy of hundreds of MB to prepend it).
std::string encode_sets(const std::vector<TensorSet>& sets, std::string_view prefix = {});
// Throws npucc::Error when `bytes` is not what encode_sets wrote.
std::vector<TensorSet> decode_sets(std::string_view bytes);

} // namespace npucc::runtime
