#include "accuracy/task_metrics.h"

#include <cmath>
#include <limits>

namespace npucc::accuracy {

namespace {

Figure defined_figure(double value) { return {value, {}}; }
Figure undefined_because(std::string why) {
  return {std::numeric_limits<double>::quiet_NaN(), std::move(why)};
}

std::string plural(int64_t count, const char* what) {
  return std::to_string(count) + " " + what + (count == 1 ? "" : "s");
}

// The reason every figure shares, or empty.
std::string broken_reference(const Values& v) {
  if (v.high_nonfinite > 0) {
    return "the high output holds " + plural(v.high_nonfinite, "non-finite value");
  }
  if (v.high.empty()) {
    return "the output has no element";
  }
  return {};
}

std::string broken_low(const Values& v) {
  return "the low output holds " + plural(v.low_nonfinite, "non-finite value") +
         " where the high one is finite";
}

// numpy.argmax of one row: the first maximum, and the first NaN if there is one.
size_t argmax(const std::vector<double>& values, size_t first, size_t count) {
  size_t best = first;
  for (size_t i = first; i < first + count; ++i) {
    if (std::isnan(values[i])) {
      return i;
    }
    if (values[i] > values[best]) {
      best = i;
    }
  }
  return best;
}

double squared_error(const Values& v) {
  double sum = 0;
  for (size_t i = 0; i < v.high.size(); ++i) {
    const double d = v.low[i] - v.high[i];
    sum += d * d;
  }
  return sum;
}

Figure decibels(double signal, double noise) {
  return defined_figure(noise == 0 ? std::numeric_limits<double>::infinity()
                             : 10 * std::log10(signal / noise));
}

} // namespace

Figure cosine_figure(const Values& v) {
  if (static_cast<int64_t>(v.high.size()) < k_min_cosine_elements) {
    return undefined_because(plural(static_cast<int64_t>(v.high.size()), "element") +
                             " per sample, fewer than " + std::to_string(k_min_cosine_elements));
  }
  if (auto broken = broken_reference(v); !broken.empty()) {
    return undefined_because(broken);
  }
  if (v.low_nonfinite > 0) {
    return undefined_because(broken_low(v));
  }
  double dot = 0, norm_high = 0, norm_low = 0;
  for (size_t i = 0; i < v.high.size(); ++i) {
    dot += v.high[i] * v.low[i];
    norm_high += v.high[i] * v.high[i];
    norm_low += v.low[i] * v.low[i];
  }
  if (norm_high == 0) {
    return undefined_because("the high output is all zero (a zero-norm reference)");
  }
  if (norm_low == 0) {
    return defined_figure(0); // a collapse: nothing left of the output's direction
  }
  return defined_figure(dot / (std::sqrt(norm_high) * std::sqrt(norm_low)));
}

Figure top1_figure(const Values& v) {
  const int64_t classes = v.shape.empty() ? 1 : v.shape.back();
  if (classes < 2) {
    return undefined_because("the last axis has " + plural(classes, "element") +
                             ": no argmax to compare");
  }
  if (auto broken = broken_reference(v); !broken.empty()) {
    return undefined_because(broken);
  }
  const size_t row = static_cast<size_t>(classes);
  const size_t rows = v.high.size() / row;
  size_t agree = 0;
  for (size_t r = 0; r < rows; ++r) {
    agree += argmax(v.high, r * row, row) == argmax(v.low, r * row, row) ? 1 : 0;
  }
  return defined_figure(static_cast<double>(agree) / static_cast<double>(rows));
}

Figure iou_figure(const Values& v, double threshold) {
  if (auto broken = broken_reference(v); !broken.empty()) {
    return undefined_because(broken);
  }
  int64_t both = 0, either = 0;
  for (size_t i = 0; i < v.high.size(); ++i) {
    const bool h = v.high[i] > threshold, l = v.low[i] > threshold;
    both += h && l ? 1 : 0;
    either += h || l ? 1 : 0;
  }
  if (either == 0) {
    return undefined_because("neither output exceeds " + shortest_number(threshold));
  }
  return defined_figure(static_cast<double>(both) / static_cast<double>(either));
}

Figure psnr_figure(const Values& v) {
  if (auto broken = broken_reference(v); !broken.empty()) {
    return undefined_because(broken);
  }
  if (v.low_nonfinite > 0) {
    return undefined_because(broken_low(v));
  }
  double lowest = v.high[0], highest = v.high[0];
  for (double h : v.high) {
    lowest = std::min(lowest, h);
    highest = std::max(highest, h);
  }
  if (highest == lowest) {
    return undefined_because("the high output is constant: no range for a peak");
  }
  const double peak = highest - lowest;
  return decibels(peak * peak, squared_error(v) / static_cast<double>(v.high.size()));
}

Figure snr_figure(const Values& v) {
  if (auto broken = broken_reference(v); !broken.empty()) {
    return undefined_because(broken);
  }
  if (v.low_nonfinite > 0) {
    return undefined_because(broken_low(v));
  }
  double signal = 0;
  for (double h : v.high) {
    signal += h * h;
  }
  if (signal == 0) {
    return undefined_because("the high output is all zero (a zero-norm reference)");
  }
  return decibels(signal, squared_error(v));
}

Figure close_figure(const Values& v, double atol, double rtol) {
  if (auto broken = broken_reference(v); !broken.empty()) {
    return undefined_because(broken);
  }
  int64_t within = 0;
  for (size_t i = 0; i < v.high.size(); ++i) {
    // NaN compares false: a non-finite low value misses.
    within += std::fabs(v.low[i] - v.high[i]) <= atol + rtol * std::fabs(v.high[i]) ? 1 : 0;
  }
  return defined_figure(static_cast<double>(within) / static_cast<double>(v.high.size()));
}

std::string iou_name(double threshold) { return "iou@" + shortest_number(threshold); }

std::string close_name(double atol, double rtol) {
  return "close[atol=" + shortest_number(atol) + ",rtol=" + shortest_number(rtol) + "]";
}

} // namespace npucc::accuracy
