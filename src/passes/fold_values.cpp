#include "passes/fold_values.h"

#include "model/tensor_info.h"
#include "model/weight_store.h"

#include <cstring>

namespace npucc::passes {

namespace {

using T = onnx::TensorProto;

template <typename Stored, typename Out>
bool read_raw(std::string_view raw, size_t count, std::vector<Out>& out) {
  if (raw.size() != count * sizeof(Stored)) {
    return false;
  }
  out.resize(count);
  for (size_t i = 0; i < count; ++i) {
    Stored element;
    std::memcpy(&element, raw.data() + i * sizeof(Stored), sizeof(Stored));
    out[i] = static_cast<Out>(element);
  }
  return true;
}

template <typename Field, typename Out>
bool read_field(const Field& field, size_t count, std::vector<Out>& out) {
  if (static_cast<size_t>(field.size()) != count) {
    return false;
  }
  out.assign(field.begin(), field.end());
  return true;
}

} // namespace

bool FoldValue::fits_fold_limit() const {
  uint64_t elements = 1;
  for (int64_t dim : dims) {
    elements *= static_cast<uint64_t>(dim);
    if (elements > k_max_fold_elements) {
      return false;
    }
  }
  return true;
}

size_t FoldValue::count() const {
  size_t n = 1;
  for (int64_t dim : dims) {
    n *= static_cast<size_t>(dim);
  }
  return n;
}

void FoldValue::allocate() {
  if (is_float()) {
    floats.assign(count(), 0.0F);
  } else {
    ints.assign(count(), 0);
  }
}

bool is_foldable_type(int32_t type) {
  return type == T::INT64 || type == T::INT32 || type == T::BOOL || type == T::FLOAT;
}

std::optional<FoldValue> read_fold_value(const onnx::TensorProto& tensor) {
  if (!is_foldable_type(tensor.data_type()) || tensor.has_segment() ||
      model::is_unloaded_external(tensor)) {
    return std::nullopt;
  }
  auto elements = model::element_count(tensor);
  if (!elements || *elements > k_max_fold_elements) {
    return std::nullopt;
  }
  FoldValue value;
  value.type = tensor.data_type();
  value.dims.assign(tensor.dims().begin(), tensor.dims().end());
  const size_t count = static_cast<size_t>(*elements);
  const auto raw_view = model::raw_bytes(tensor);
  const bool raw = raw_view.has_value();
  const std::string_view raw_data = raw ? *raw_view : std::string_view();
  bool ok = false;
  switch (value.type) {
  case T::INT64:
    ok = raw ? read_raw<int64_t>(raw_data, count, value.ints)
             : read_field(tensor.int64_data(), count, value.ints);
    break;
  case T::INT32:
    ok = raw ? read_raw<int32_t>(raw_data, count, value.ints)
             : read_field(tensor.int32_data(), count, value.ints);
    break;
  case T::BOOL:
    ok = raw ? read_raw<uint8_t>(raw_data, count, value.ints)
             : read_field(tensor.int32_data(), count, value.ints);
    for (auto& element : value.ints) {
      element = element != 0 ? 1 : 0;
    }
    break;
  default: // FLOAT
    ok = raw ? read_raw<float>(raw_data, count, value.floats)
             : read_field(tensor.float_data(), count, value.floats);
    break;
  }
  if (!ok) {
    return std::nullopt;
  }
  return value;
}

onnx::TensorProto to_tensor(const FoldValue& value, const std::string& name) {
  onnx::TensorProto tensor;
  tensor.set_name(name);
  tensor.set_data_type(value.type);
  for (int64_t dim : value.dims) {
    tensor.add_dims(dim);
  }
  switch (value.type) {
  case T::INT64:
    tensor.mutable_int64_data()->Add(value.ints.begin(), value.ints.end());
    break;
  case T::INT32:
  case T::BOOL:
    for (int64_t element : value.ints) {
      tensor.add_int32_data(static_cast<int32_t>(element));
    }
    break;
  default:
    tensor.mutable_float_data()->Add(value.floats.begin(), value.floats.end());
    break;
  }
  return tensor;
}

bool is_onnx_node(const onnx::NodeProto& node) {
  return node.domain().empty() || node.domain() == "ai.onnx";
}

} // namespace npucc::passes
