#include "accuracy/drift_report.h"

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

// A tensor's values as floats in `scratch` (float32 copied, float16/bfloat16 decoded); false
// for other types, which take to_doubles().
bool read_floats(const runtime::Tensor& tensor, std::vector<float>& scratch) {
  if (!runtime::is_float_type(tensor.type) || tensor.type == onnx::TensorProto::DOUBLE) {
    return false;
  }
  const size_t n = tensor.bytes.size() / runtime::element_size(tensor.type);
  scratch.resize(n);
  const auto* halves = reinterpret_cast<const uint16_t*>(tensor.bytes.data()); // NOLINT
  switch (tensor.type) {
  case onnx::TensorProto::FLOAT: std::memcpy(scratch.data(), tensor.bytes.data(), n * 4); return true;
  case onnx::TensorProto::FLOAT16: precision::half_to_float(halves, scratch.data(), n); return true;
  case onnx::TensorProto::BFLOAT16:
    precision::bfloat16_to_float(halves, scratch.data(), n);
    return true;
  default: return false;
  }
}

// What one pass over a set's elements gives: the cosine's sums and the non-finite counts.
struct Pass {
  double dot = 0, norm_high = 0, norm_low = 0;
  int64_t high_nonfinite = 0, low_nonfinite = 0;
};

// Errors, shares, the high value's range and the cosine's sums of one set.
template <typename T> Pass fold_elements(DriftFigures& f, const T* high, const T* low, size_t n) {
  Pass pass;
  for (size_t i = 0; i < n; ++i) {
    const double h = high[i];
    const double l = low[i];
    pass.dot += h * l;
    pass.norm_high += h * h;
    pass.norm_low += l * l;
    if (!std::isfinite(h)) {
      ++pass.high_nonfinite;
      continue;
    }
    const double magnitude = std::fabs(h);
    f.high_max_abs = std::max(f.high_max_abs, magnitude);
    if (magnitude > 0) {
      f.high_min_nonzero_abs = std::min(f.high_min_nonzero_abs, magnitude);
    }
    if (!std::isfinite(l)) {
      ++f.overflowed;
      ++pass.low_nonfinite;
      continue;
    }
    f.flushed += (l == 0 && h != 0) ? 1 : 0;
    f.max_abs_error = std::max(f.max_abs_error, std::fabs(l - h));
  }
  return pass;
}

// The cosine from the pass's sums where task_metrics.h defines it plainly (the same sums
// in the same order), else cosine_figure itself for its reason.
Figure cosine_of(const Pass& pass, const runtime::Tensor& high, const runtime::Tensor& low) {
  const int64_t n = runtime::element_count(high.shape);
  if (n < k_min_cosine_elements || pass.high_nonfinite > 0 || pass.low_nonfinite > 0 ||
      pass.norm_high == 0) {
    const auto h = to_doubles(high);
    const auto l = to_doubles(low);
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
  if (high.shape != low.shape) {
    throw Error("value '" + high.name + "' is " + runtime::describe(high.type, high.shape) +
                    " in the high graph and " + runtime::describe(low.type, low.shape) +
                    " in the low graph's emulation",
                "compare values of the same shape");
  }
  thread_local std::vector<float> high_floats, low_floats;
  Pass pass;
  size_t n = 0;
  if (read_floats(high, high_floats) && read_floats(low, low_floats)) {
    n = high_floats.size();
    pass = fold_elements(figures, high_floats.data(), low_floats.data(), n);
  } else {
    const auto h = to_doubles(high);
    const auto l = to_doubles(low);
    n = h.size();
    pass = fold_elements(figures, h.data(), l.data(), n);
  }
  fold_cosine(figures, cosine_of(pass, high, low));
  figures.elements = std::max(figures.elements, static_cast<int64_t>(n));
  figures.total += static_cast<int64_t>(n);
  ++figures.sets;
}

bool body_set_comparable(DriftFigures& figures, const runtime::Tensor& high,
                         const runtime::Tensor& low) {
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
