#include "runtime/tensor.h"

#include "npucc/error.h"
#include "util/socket_channel.h"
#include "util/strings.h"

#include <onnx/onnx_pb.h>

namespace npucc::runtime {

namespace {

struct TypeInfo {
  int32_t type;
  const char* name;
  size_t size;
};

constexpr TypeInfo k_types[] = {
    {onnx::TensorProto::FLOAT, "float32", 4},    {onnx::TensorProto::UINT8, "uint8", 1},
    {onnx::TensorProto::INT8, "int8", 1},        {onnx::TensorProto::UINT16, "uint16", 2},
    {onnx::TensorProto::INT16, "int16", 2},      {onnx::TensorProto::INT32, "int32", 4},
    {onnx::TensorProto::INT64, "int64", 8},      {onnx::TensorProto::STRING, "string", 0},
    {onnx::TensorProto::BOOL, "bool", 1},        {onnx::TensorProto::FLOAT16, "float16", 2},
    {onnx::TensorProto::DOUBLE, "float64", 8},   {onnx::TensorProto::UINT32, "uint32", 4},
    {onnx::TensorProto::UINT64, "uint64", 8},    {onnx::TensorProto::BFLOAT16, "bfloat16", 2},
};

const TypeInfo* find_type(int32_t type) {
  for (const auto& info : k_types) {
    if (info.type == type) {
      return &info;
    }
  }
  return nullptr;
}

// Decimal fields of the wire form.
int64_t parse_number(const std::string& text) {
  try {
    size_t used = 0;
    long long value = std::stoll(text, &used);
    if (used == text.size()) {
      return value;
    }
  } catch (const std::exception&) {
  }
  throw Error("runtime: a tensor did not arrive intact");
}

std::string join_dims(const std::vector<int64_t>& shape) {
  std::string out;
  for (size_t i = 0; i < shape.size(); ++i) {
    out += (i ? "," : "") + std::to_string(shape[i]);
  }
  return out;
}

std::vector<int64_t> split_dims(const std::string& text) {
  std::vector<int64_t> shape;
  if (text.empty()) {
    return shape;
  }
  for (const auto& piece : util::split(text, ',')) {
    shape.push_back(parse_number(piece));
  }
  return shape;
}

} // namespace

size_t element_size(int32_t type) {
  const TypeInfo* info = find_type(type);
  return info != nullptr ? info->size : 0;
}

int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    count *= dim;
  }
  return count;
}

bool is_float_type(int32_t type) {
  return type == onnx::TensorProto::FLOAT || type == onnx::TensorProto::DOUBLE ||
         type == onnx::TensorProto::FLOAT16 || type == onnx::TensorProto::BFLOAT16;
}

std::string type_name(int32_t type) {
  const TypeInfo* info = find_type(type);
  return info != nullptr ? info->name : "element type " + std::to_string(type);
}

std::string describe(int32_t type, const std::vector<int64_t>& shape) {
  return type_name(type) + "[" + join_dims(shape) + "]";
}

TensorView view_of(const Tensor& tensor) {
  return {tensor.name, tensor.type, tensor.shape, tensor.bytes};
}

Tensor copy_of(const TensorView& view) {
  return {std::string(view.name), view.type, view.shape, std::string(view.bytes)};
}

// Fields: the number of sets, then per set its tensor count and per tensor its name, type,
// dims and bytes.
std::string encode_sets(const std::vector<TensorSet>& sets, std::string_view prefix) {
  std::string out;
  size_t size = 64 + prefix.size();
  for (const auto& set : sets) {
    for (const auto& tensor : set) {
      size += tensor.name.size() + tensor.bytes.size() + 32 * (tensor.shape.size() + 4);
    }
  }
  out.reserve(size); // one allocation: an input set is megabytes
  out += prefix;
  util::append_field(out, std::to_string(sets.size()));
  for (const auto& set : sets) {
    util::append_field(out, std::to_string(set.size()));
    for (const auto& tensor : set) {
      util::append_field(out, tensor.name);
      util::append_field(out, std::to_string(tensor.type));
      util::append_field(out, join_dims(tensor.shape));
      util::append_field(out, tensor.bytes);
    }
  }
  return out;
}

std::vector<TensorSet> decode_sets(std::string_view bytes) {
  size_t at = 0;
  auto next = [&]() {
    std::string_view field;
    if (!util::next_field(bytes, at, field)) {
      throw Error("runtime: a tensor did not arrive intact");
    }
    return std::string(field);
  };
  std::vector<TensorSet> sets(static_cast<size_t>(parse_number(next())));
  for (auto& set : sets) {
    set.resize(static_cast<size_t>(parse_number(next())));
    for (auto& tensor : set) {
      tensor.name = next();
      tensor.type = static_cast<int32_t>(parse_number(next()));
      tensor.shape = split_dims(next());
      tensor.bytes = next();
    }
  }
  if (at != bytes.size()) {
    throw Error("runtime: a tensor did not arrive intact");
  }
  return sets;
}

} // namespace npucc::runtime
