#include "accuracy/metrics.h"

#include "accuracy/task_metrics.h"

#include "npucc/error.h"
#include "precision/float_convert.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
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

std::pair<int64_t, int64_t> count_nonfinite(const runtime::Tensor& tensor) {
  int64_t nan = 0, infinite = 0;
  for (double value : to_doubles(tensor)) {
    nan += std::isnan(value) ? 1 : 0;
    infinite += std::isinf(value) ? 1 : 0;
  }
  return {nan, infinite};
}

namespace {

// The errors over the elements finite in both, and the counts.
void measure_errors(const std::vector<double>& reference, const std::vector<double>& actual,
                    SampleMetrics& m) {
  double scale = 0;
  for (double r : reference) {
    if (std::isfinite(r)) {
      scale = std::max(scale, std::fabs(r));
    }
  }
  const double floor = std::max(1e-3 * scale, 1e-6);
  bool low_nonzero = false;
  for (size_t i = 0; i < reference.size(); ++i) {
    const double r = reference[i], a = actual[i];
    low_nonzero = low_nonzero || a != 0;
    if (!std::isfinite(r)) {
      ++m.high_nonfinite;
      continue;
    }
    if (!std::isfinite(a)) {
      ++m.nonfinite;
      continue;
    }
    ++m.elements;
    const double error = std::fabs(a - r);
    m.max_abs_error = std::max(m.max_abs_error, error);
    m.max_rel_error = std::max(m.max_rel_error, error / std::max(std::fabs(r), floor));
  }
  m.low_all_zero = !low_nonzero && scale > 0;
}

} // namespace

SampleMetrics compare_output(const runtime::Tensor& high, const runtime::Tensor& low,
                             const FigureRequests& requests) {
  if (high.shape != low.shape) {
    throw Error("output '" + high.name + "': the high graph gives " +
                runtime::describe(high.type, high.shape) + " and the low graph " +
                runtime::describe(low.type, low.shape));
  }
  const std::vector<double> reference = to_doubles(high);
  const std::vector<double> actual = to_doubles(low);
  SampleMetrics m;
  m.size = static_cast<int64_t>(reference.size());
  m.classes = high.shape.empty() ? 1 : high.shape.back();
  measure_errors(reference, actual, m);
  const Values values{reference, actual, high.shape, m.high_nonfinite, m.nonfinite};
  m.figures["cosine"] = cosine_figure(values);
  m.figures["top1"] = top1_figure(values);
  m.figures["psnr"] = psnr_figure(values);
  m.figures["snr_db"] = snr_figure(values);
  for (double threshold : requests.iou_thresholds) {
    m.figures[iou_name(threshold)] = iou_figure(values, threshold);
  }
  for (const auto& [atol, rtol] : requests.tolerances) {
    m.figures[close_name(atol, rtol)] = close_figure(values, atol, rtol);
  }
  return m;
}

void merge(OutputMetrics& total, SampleMetrics sample) {
  if (total.function) { // a caller's function: its value alone, no output figures
    total.samples.push_back(std::move(sample));
    return;
  }
  const Figure& cosine = sample.figures["cosine"];
  const bool first = total.samples.empty();
  if (cosine.defined()) { // the lowest defined cosine; NaN while none is
    total.cosine = first || std::isnan(total.cosine) ? cosine.value
                                                     : std::min(total.cosine, cosine.value);
  } else {
    total.cosine = first ? std::numeric_limits<double>::quiet_NaN() : total.cosine;
    if (total.cosine_undefined.empty()) {
      total.cosine_undefined = cosine.undefined;
    }
  }
  total.max_abs_error = std::max(total.max_abs_error, sample.max_abs_error);
  total.max_rel_error = std::max(total.max_rel_error, sample.max_rel_error);
  total.nonfinite += sample.nonfinite;
  total.high_nonfinite += sample.high_nonfinite;
  total.elements += sample.elements;
  total.samples.push_back(std::move(sample));
}

std::string shortest_number(double value) {
  char out[64];
  for (int digits = 1; digits <= 17; ++digits) { // shortest form that reads back the same
    std::snprintf(out, sizeof out, "%.*g", digits, value);
    if (std::strtod(out, nullptr) == value) {
      break;
    }
  }
  if (std::strchr(out, 'e') != nullptr && value == std::floor(value) && std::fabs(value) < 1e15) {
    std::snprintf(out, sizeof out, "%.0f", value); // "30", not "3e+01"
  }
  return out;
}

} // namespace npucc::accuracy
