#include "accuracy/drift_report.h"

#include "accuracy/drift_elements.h"
#include "accuracy/metrics.h"
#include "accuracy/task_metrics.h"
#include "npucc/error.h"
#include "precision/float_convert.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <onnx/onnx_pb.h>

namespace npucc::accuracy {

namespace {

using nlohmann::json;

// Whether a tensor's values read as floats (float32, float16, bfloat16); the others take
// to_doubles().
bool reads_as_floats(const runtime::TensorView& tensor) {
  return tensor.type == onnx::TensorProto::FLOAT || tensor.type == onnx::TensorProto::FLOAT16 ||
         tensor.type == onnx::TensorProto::BFLOAT16;
}

// Elements [first, first + count) of a float tensor as floats: float32 read where it is (when
// aligned), else decoded or copied into `buffer`, a chunk at a time, so that the decoded
// floats stay in the cache (a whole value decoded at once crosses memory twice more).
const float* float_chunk(const runtime::TensorView& tensor, size_t first, size_t count,
                         float* buffer) {
  const char* bytes = tensor.bytes.data() + first * runtime::element_size(tensor.type);
  if (tensor.type == onnx::TensorProto::FLOAT) {
    if (reinterpret_cast<uintptr_t>(bytes) % alignof(float) == 0) { // NOLINT
      return reinterpret_cast<const float*>(bytes); // NOLINT: aligned floats
    }
    std::memcpy(buffer, bytes, count * sizeof(float));
    return buffer;
  }
  const auto* halves = reinterpret_cast<const uint16_t*>(bytes); // NOLINT: 2-byte elements
  if (tensor.type == onnx::TensorProto::FLOAT16) {
    precision::half_to_float(halves, buffer, count);
  } else {
    precision::bfloat16_to_float(halves, buffer, count);
  }
  return buffer;
}

// Folds two float tensors of `n` elements a chunk at a time, continuing `pass`.
void fold_float_chunks(DriftFigures& figures, const runtime::TensorView& high,
                       const runtime::TensorView& low, size_t n, DriftPass& pass) {
  constexpr size_t k_chunk = 4096;
  thread_local std::vector<float> high_buffer(k_chunk), low_buffer(k_chunk);
  for (size_t first = 0; first < n; first += k_chunk) {
    const size_t count = std::min(k_chunk, n - first);
    fold_elements(figures, float_chunk(high, first, count, high_buffer.data()),
                  float_chunk(low, first, count, low_buffer.data()), count, pass);
  }
}

// The cosine from the pass's sums where task_metrics.h defines it plainly (the same sums
// in the same order), else cosine_figure itself for its reason.
Figure cosine_of(const DriftPass& pass, const runtime::TensorView& high,
                 const runtime::TensorView& low) {
  const int64_t n = runtime::element_count(high.shape);
  if (n < k_min_cosine_elements || pass.high_nonfinite > 0 || pass.low_nonfinite > 0 ||
      pass.norm_high == 0) {
    const auto h = to_doubles(runtime::copy_of(high));
    const auto l = to_doubles(runtime::copy_of(low));
    return cosine_figure({h, l, high.shape, pass.high_nonfinite, pass.low_nonfinite});
  }
  Figure figure;
  figure.value =
      pass.norm_low == 0 ? 0 : pass.dot / (std::sqrt(pass.norm_high) * std::sqrt(pass.norm_low));
  return figure;
}

void fold_cosine(DriftFigures& f, const Figure& cosine) {
  if (!cosine.defined()) {
    if (f.cosine_undefined.empty()) {
      f.cosine_undefined = cosine.undefined;
    }
    return;
  }
  // The sums' rounding can put the cosine of two equal values an ulp above 1 (seen on the
  // dynamo encoder): clamped, so that drift = 1 - cosine is never negative.
  const double value = std::clamp(cosine.value, -1.0, 1.0);
  f.cosine = std::isnan(f.cosine) ? value : std::min(f.cosine, value);
}

json number_or_null(double value) {
  return std::isfinite(value) ? json(value) : json(nullptr);
}

// 1 - cosine; 1 for an overflow that leaves no cosine; NaN when undefined.
double drift_of(const DriftFigures& f) {
  if (!std::isnan(f.cosine)) {
    return 1 - f.cosine;
  }
  return f.overflowed > 0 ? 1.0 : std::numeric_limits<double>::quiet_NaN();
}

double added_drift(const DriftValue& value, const std::vector<DriftFigures>& figures,
                   size_t index) {
  const double out = drift_of(figures[index]);
  if (std::isnan(out)) {
    return out;
  }
  double in = 0;
  for (size_t input : value.inputs) {
    const double d = drift_of(figures[input]);
    in = std::isnan(d) ? in : std::max(in, d);
  }
  return out / std::max(in, k_drift_floor);
}

bool crosses(const DriftFigures& f, double threshold) {
  return (!std::isnan(f.cosine) && f.cosine < threshold) || f.overflowed > 0;
}

// Where a body's value is and what its sets gave.
json body_json(const DriftValue& v, const DriftFigures& f) {
  json path = json::array();
  for (const auto& step : v.body) {
    path.push_back({{"node", step.owner_name}, {"op_type", step.owner_op},
                    {"attribute", step.attribute}, {"output", step.owner}});
  }
  return {{"path", std::move(path)},
          {"stacked_axes", stacked_axes(v.body)},
          {"sets_compared", f.sets},
          {"sets_empty", f.sets_empty},
          {"sets_differing", f.sets_differing}};
}

// The check's reason, or for a body's value no set compared, why.
json undefined_cosine_json(const DriftValue& v, const DriftFigures& f) {
  if (!v.body.empty() && f.sets == 0) {
    return "no sample set gave this body value in both runs with one shape (" +
           std::to_string(f.sets_empty) + " set(s) empty in both: its branch or loop did not " +
           "run; " + std::to_string(f.sets_differing) + " of different shapes)";
  }
  return f.cosine_undefined.empty() ? json(nullptr) : json(f.cosine_undefined);
}

json value_json(const DriftValue& v, const DriftFigures& f, double added) {
  const double total = f.total > 0 ? static_cast<double>(f.total) : 1.0;
  json out = {{"order", v.order},
              {"node", v.node},
              {"op_type", v.op_type},
              {"value", v.value},
              {"graph", v.graph},
              {"stored", v.stored},
              {"kept_reason", v.kept_reason.empty() ? json(nullptr) : json(v.kept_reason)},
              {"elements", f.elements},
              {"cosine", number_or_null(f.cosine)},
              {"cosine_undefined", undefined_cosine_json(v, f)},
              {"max_abs_error", f.max_abs_error},
              {"flush_share", static_cast<double>(f.flushed) / total},
              {"overflow_share", static_cast<double>(f.overflowed) / total},
              {"high_max_abs", f.high_max_abs},
              {"high_min_nonzero_abs", number_or_null(f.high_min_nonzero_abs)},
              {"added_drift", number_or_null(added)},
              {"inputs", v.inputs}};
  if (!v.body.empty()) {
    out["body"] = body_json(v, f);
  }
  return out;
}

// Values of real drift that at least double their inputs', the largest added_drift first.
json top_offenders(const std::vector<double>& added, const std::vector<DriftFigures>& figures) {
  std::vector<size_t> ranked;
  for (size_t i = 0; i < added.size(); ++i) {
    if (std::isfinite(added[i]) && added[i] >= 2 && drift_of(figures[i]) > k_drift_floor) {
      ranked.push_back(i);
    }
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](size_t a, size_t b) { return added[a] > added[b]; });
  ranked.resize(std::min(ranked.size(), k_top_offenders));
  return ranked;
}

} // namespace

void fold_drift(DriftFigures& figures, const runtime::Tensor& high, const runtime::Tensor& low) {
  fold_drift(figures, runtime::view_of(high), runtime::view_of(low));
}

void fold_drift(DriftFigures& figures, const runtime::TensorView& high,
                const runtime::TensorView& low) {
  if (high.shape != low.shape) {
    throw Error("value '" + std::string(high.name) + "' is " + runtime::describe(high.type, high.shape) +
                    " in the high graph and " + runtime::describe(low.type, low.shape) +
                    " in the low graph's emulation",
                "compare values of the same shape");
  }
  DriftPass pass;
  size_t n = 0;
  if (reads_as_floats(high) && reads_as_floats(low)) {
    n = high.bytes.size() / runtime::element_size(high.type);
    fold_float_chunks(figures, high, low, n, pass);
  } else {
    const auto h = to_doubles(runtime::copy_of(high));
    const auto l = to_doubles(runtime::copy_of(low));
    n = h.size();
    fold_elements(figures, h.data(), l.data(), n, pass);
  }
  fold_cosine(figures, cosine_of(pass, high, low));
  figures.elements = std::max(figures.elements, static_cast<int64_t>(n));
  figures.total += static_cast<int64_t>(n);
  ++figures.sets;
}

bool body_set_comparable(DriftFigures& figures, const runtime::Tensor& high,
                         const runtime::Tensor& low) {
  return body_set_comparable(figures, runtime::view_of(high), runtime::view_of(low));
}

bool body_set_comparable(DriftFigures& figures, const runtime::TensorView& high,
                         const runtime::TensorView& low) {
  const bool high_empty = runtime::element_count(high.shape) == 0;
  const bool low_empty = runtime::element_count(low.shape) == 0;
  if (high_empty && low_empty) {
    ++figures.sets_empty;
    return false;
  }
  if (high_empty != low_empty || high.shape != low.shape) {
    ++figures.sets_differing;
    return false;
  }
  return true;
}

json drift_json(const std::vector<DriftValue>& values, const std::vector<DriftFigures>& figures,
                const DriftRun& run) {
  json list = json::array();
  std::vector<double> added(values.size());
  json first = nullptr;
  for (size_t i = 0; i < values.size(); ++i) {
    added[i] = added_drift(values[i], figures, i);
    list.push_back(value_json(values[i], figures[i], added[i]));
    if (first.is_null() && crosses(figures[i], run.threshold)) {
      first = i;
    }
  }
  return {{"format", "npucc-drift"},
          {"version", 1},
          {"format_version", 1},
          {"low_type", run.low_type},
          {"sample_sets", run.sample_sets},
          {"runtime_runs", run.runtime_runs},
          {"threshold", {{"metric", "cosine"}, {"below", run.threshold}}},
          {"drift_floor", k_drift_floor},
          {"first_crossing", first},
          {"top_offenders", top_offenders(added, figures)},
          {"values", std::move(list)}};
}

} // namespace npucc::accuracy
