#include "accuracy/metrics.h"

#include "npucc/error.h"
#include "precision/float_convert.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <onnx/onnx_pb.h>

namespace npucc::accuracy {

namespace {

template <typename T> std::vector<double> read_as(const std::string& bytes) {
  std::vector<double> out(bytes.size() / sizeof(T));
  for (size_t i = 0; i < out.size(); ++i) {
    T value;
    std::memcpy(&value, bytes.data() + i * sizeof(T), sizeof(T));
    out[i] = static_cast<double>(value);
  }
  return out;
}

std::vector<double> read_halves(const std::string& bytes, float (*decode)(uint16_t)) {
  std::vector<double> out(bytes.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    uint16_t bits;
    std::memcpy(&bits, bytes.data() + i * 2, 2);
    out[i] = decode(bits);
  }
  return out;
}

} // namespace

std::vector<double> to_doubles(const runtime::Tensor& tensor) {
  switch (tensor.type) {
  case onnx::TensorProto::FLOAT: return read_as<float>(tensor.bytes);
  case onnx::TensorProto::DOUBLE: return read_as<double>(tensor.bytes);
  case onnx::TensorProto::FLOAT16: return read_halves(tensor.bytes, precision::half_to_float);
  case onnx::TensorProto::BFLOAT16:
    return read_halves(tensor.bytes, precision::bfloat16_to_float);
  case onnx::TensorProto::INT8: return read_as<int8_t>(tensor.bytes);
  case onnx::TensorProto::UINT8: return read_as<uint8_t>(tensor.bytes);
  case onnx::TensorProto::BOOL: return read_as<uint8_t>(tensor.bytes);
  case onnx::TensorProto::INT16: return read_as<int16_t>(tensor.bytes);
  case onnx::TensorProto::UINT16: return read_as<uint16_t>(tensor.bytes);
  case onnx::TensorProto::INT32: return read_as<int32_t>(tensor.bytes);
  case onnx::TensorProto::UINT32: return read_as<uint32_t>(tensor.bytes);
  case onnx::TensorProto::INT64: return read_as<int64_t>(tensor.bytes);
  case onnx::TensorProto::UINT64: return read_as<uint64_t>(tensor.bytes);
  default:
    throw Error("output '" + tensor.name + "' is of " + runtime::type_name(tensor.type) +
                ": accuracy is measured on numeric outputs only");
  }
}

OutputMetrics compare_output(const runtime::Tensor& high, const runtime::Tensor& low) {
  if (high.shape != low.shape) {
    throw Error("output '" + high.name + "': the high graph gives " +
                runtime::describe(high.type, high.shape) + " and the low graph " +
                runtime::describe(low.type, low.shape));
  }
  const std::vector<double> reference = to_doubles(high);
  const std::vector<double> actual = to_doubles(low);
  OutputMetrics m;
  m.name = high.name;
  double scale = 0;
  for (double r : reference) {
    if (std::isfinite(r)) {
      scale = std::max(scale, std::fabs(r));
    }
  }
  const double floor = std::max(1e-3 * scale, 1e-6);
  double dot = 0, norm_reference = 0, norm_actual = 0;
  for (size_t i = 0; i < reference.size(); ++i) {
    const double r = reference[i], a = actual[i];
    if (!std::isfinite(r)) {
      continue;
    }
    if (!std::isfinite(a)) {
      ++m.nonfinite;
      continue;
    }
    ++m.elements;
    dot += r * a;
    norm_reference += r * r;
    norm_actual += a * a;
    const double error = std::fabs(a - r);
    m.max_abs_error = std::max(m.max_abs_error, error);
    m.max_rel_error = std::max(m.max_rel_error, error / std::max(std::fabs(r), floor));
  }
  if (m.elements == 0 && m.nonfinite > 0) {
    m.cosine = 0; // nothing finite left to compare: as far apart as it gets
  } else if (norm_reference == 0 || norm_actual == 0) {
    m.cosine = norm_reference == norm_actual ? 1 : 0;
  } else {
    m.cosine = dot / (std::sqrt(norm_reference) * std::sqrt(norm_actual));
  }
  return m;
}

void merge(OutputMetrics& total, const OutputMetrics& sample) {
  total.cosine = std::min(total.cosine, sample.cosine);
  total.max_abs_error = std::max(total.max_abs_error, sample.max_abs_error);
  total.max_rel_error = std::max(total.max_rel_error, sample.max_rel_error);
  total.nonfinite += sample.nonfinite;
  total.elements += sample.elements;
}

} // namespace npucc::accuracy
