#include "accuracy/check.h"

#include "npucc/error.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace npucc::accuracy {

std::vector<OutputMetrics> compare_sets(const std::vector<std::string>& names,
                                        const std::vector<runtime::TensorSet>& high,
                                        const std::vector<runtime::TensorSet>& low,
                                        const FigureRequests& requests, int64_t first_set) {
  std::vector<OutputMetrics> out;
  for (size_t o = 0; o < names.size(); ++o) {
    OutputMetrics total;
    total.name = names[o];
    for (size_t s = 0; s < high.size() && s < low.size(); ++s) {
      SampleMetrics sample = compare_output(high[s][o], low[s][o], requests);
      sample.set = first_set + static_cast<int64_t>(s);
      merge(total, std::move(sample));
    }
    out.push_back(std::move(total));
  }
  return out;
}

namespace {

// A figure's value: a number, "inf" (psnr/snr_db of identical outputs; JSON has no
// infinity) or null (undefined).
nlohmann::json figure_value(double value) {
  if (std::isnan(value)) {
    return nullptr;
  }
  if (std::isinf(value)) {
    return value > 0 ? "inf" : "-inf";
  }
  return value;
}

bool lower_is_worse(const std::string& figure) {
  return figure != "max_abs_error" && figure != "max_rel_error";
}

// A figure of one sample: NaN when undefined.
double sample_value(const SampleMetrics& sample, const std::string& figure) {
  if (!lower_is_worse(figure)) {
    return sample.elements == 0 ? std::nan("")
                                : figure == "max_abs_error" ? sample.max_abs_error
                                                            : sample.max_rel_error;
  }
  auto found = sample.figures.find(figure);
  return found == sample.figures.end() || !found->second.defined() ? std::nan("")
                                                                   : found->second.value;
}

// Worst, mean and median over the samples where the figure is defined (numpy.median: the
// mean of the middle two of an even count), the worst set and how many sets leave it
// undefined.
nlohmann::json figure_summary(const OutputMetrics& output, const std::string& figure) {
  const bool lower_worse = output.function ? output.higher_is_better : lower_is_worse(figure);
  std::vector<std::pair<double, int64_t>> values;
  for (const auto& sample : output.samples) {
    const double value = sample_value(sample, figure);
    if (!std::isnan(value)) {
      values.emplace_back(lower_worse ? value : -value, sample.set);
    }
  }
  const auto undefined = static_cast<int64_t>(output.samples.size() - values.size());
  if (values.empty()) {
    return {{"worst", nullptr}, {"mean", nullptr}, {"median", nullptr},
            {"worst_set", nullptr}, {"undefined_sets", undefined}};
  }
  std::stable_sort(values.begin(), values.end(),
                   [](auto& a, auto& b) { return a.first < b.first; });
  const double sign = lower_worse ? 1 : -1;
  double sum = 0;
  for (const auto& value : values) {
    sum += value.first;
  }
  const size_t n = values.size();
  const double median = n % 2 == 1 ? values[n / 2].first
                                   : (values[n / 2 - 1].first + values[n / 2].first) / 2;
  return {{"worst", figure_value(sign * values.front().first)},
          {"mean", figure_value(sign * sum / static_cast<double>(n))},
          {"median", figure_value(sign * median)},
          {"worst_set", values.front().second},
          {"undefined_sets", undefined}};
}

nlohmann::json sample_json(const SampleMetrics& sample) {
  nlohmann::json out = {{"set", sample.set},
                        {"elements", sample.elements},
                        {"size", sample.size},
                        {"nonfinite", sample.nonfinite},
                        {"high_nonfinite", sample.high_nonfinite},
                        {"low_all_zero", sample.low_all_zero},
                        {"max_abs_error", figure_value(sample_value(sample, "max_abs_error"))},
                        {"max_rel_error", figure_value(sample_value(sample, "max_rel_error"))}};
  nlohmann::json undefined = nlohmann::json::object();
  for (const auto& [name, figure] : sample.figures) {
    out[name] = figure_value(figure.defined() ? figure.value : std::nan(""));
    if (!figure.defined()) {
      undefined[name] = figure.undefined;
    }
  }
  out["undefined"] = undefined;
  return out;
}

// Each figure undefined on some sample: the first sample's reason, and on how many.
nlohmann::json undefined_json(const OutputMetrics& output) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& sample : output.samples) {
    for (const auto& [name, figure] : sample.figures) {
      if (!figure.defined() && !out.contains(name)) {
        out[name] = figure.undefined;
      }
    }
    if (sample.elements == 0 && !out.contains("max_abs_error")) {
      out["max_abs_error"] = out["max_rel_error"] = "no element is finite in both outputs";
    }
  }
  return out;
}

nlohmann::json output_json(const OutputMetrics& output) {
  const bool cosine = !std::isnan(output.cosine);
  const bool errors = output.elements > 0;
  nlohmann::json summary = nlohmann::json::object();
  summary["max_abs_error"] = figure_summary(output, "max_abs_error");
  summary["max_rel_error"] = figure_summary(output, "max_rel_error");
  nlohmann::json samples = nlohmann::json::array();
  for (const auto& sample : output.samples) {
    samples.push_back(sample_json(sample));
    for (const auto& figure : sample.figures) {
      if (!summary.contains(figure.first)) {
        summary[figure.first] = figure_summary(output, figure.first);
      }
    }
  }
  const auto judged = cosine ? nlohmann::json::array({"cosine", "max_abs_error", "max_rel_error"})
                             : nlohmann::json::array({"max_abs_error", "max_rel_error"});
  return {{"name", output.name},
          {"cosine", cosine ? nlohmann::json(output.cosine) : nlohmann::json(nullptr)},
          {"max_abs_error", errors ? nlohmann::json(output.max_abs_error) : nlohmann::json(nullptr)},
          {"max_rel_error", errors ? nlohmann::json(output.max_rel_error) : nlohmann::json(nullptr)},
          {"nonfinite", output.nonfinite},
          {"high_nonfinite", output.high_nonfinite},
          {"elements", output.elements},
          {"elements_per_sample", output.samples.empty() ? 0 : output.samples.front().size},
          {"judged_by", judged},
          {"undefined", undefined_json(output)},
          {"summary", summary},
          {"per_sample", samples}};
}

std::string sample_set_name(const AccuracyReport& report, int64_t set) {
  return set >= 0 && static_cast<size_t>(set) < report.sources.size()
             ? report.sources[static_cast<size_t>(set)]
             : "set " + std::to_string(set + 1);
}

// At most one per output: non-finite values only the low graph has, a low output all zero,
// or a cosine far from 1.
nlohmann::json collapse_warnings(const AccuracyReport& report) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& output : report.outputs) {
    if (output.function) {
      continue;
    }
    const std::string name = "output '" + output.name + "': ";
    auto zero = std::find_if(output.samples.begin(), output.samples.end(),
                             [](auto& s) { return s.low_all_zero; });
    char cosine[64];
    std::snprintf(cosine, sizeof cosine, "%.6f", output.cosine);
    if (output.nonfinite > 0) {
      out.push_back(name + std::to_string(output.nonfinite) +
                    " non-finite value(s) in the low graph where float32 gives finite values "
                    "(an overflow)");
    } else if (zero != output.samples.end()) {
      out.push_back(name + "the low graph's output is all zero on " + sample_set_name(report, zero->set) +
                    " where float32's is not (cosine " + cosine + "): its values underflow");
    } else if (!std::isnan(output.cosine) && output.cosine < k_collapse_cosine) {
      out.push_back(name + "cosine " + cosine + ", far from 1: the low graph computes "
                    "something else");
    }
  }
  return out;
}

} // namespace

nlohmann::json outputs_json(const std::vector<OutputMetrics>& outputs) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& output : outputs) {
    if (output.function) {
      continue;
    }
    out.push_back(output_json(output));
  }
  return out;
}

void add_functions_json(nlohmann::json& block, const std::vector<OutputMetrics>& metrics) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& entry : metrics) {
    if (!entry.function) {
      continue;
    }
    nlohmann::json samples = nlohmann::json::array();
    int64_t met_sets = 0;
    for (const auto& sample : entry.samples) {
      const Figure& value = sample.figures.at(entry.name);
      samples.push_back({{"set", sample.set},
                         {"value", figure_value(value.defined() ? value.value : std::nan(""))},
                         {"undefined", value.undefined}});
      met_sets += value.defined() && value.value == 1 ? 1 : 0;
    }
    nlohmann::json item = figure_summary(entry, entry.name);
    item["name"] = entry.name;
    item["per_sample"] = samples;
    if (entry.name.rfind("check[", 0) == 0) {
      item["sets_held"] = met_sets;
    }
    out.push_back(std::move(item));
  }
  if (!out.empty()) {
    block["functions"] = std::move(out);
  }
}

nlohmann::json report_json(const AccuracyReport& report) {
  nlohmann::json sets = nlohmann::json::array();
  for (const auto& source : report.sources) {
    sets.push_back({{"source", source}});
  }
  nlohmann::json out = {{"inputs", report.inputs},     {"samples", report.samples},
                        {"compared", report.compared}, {"emulates", report.emulates},
                        {"runtime", report.runtime},   {"runs", report.runs},
                        {"sets", sets},                {"outputs", outputs_json(report.outputs)},
                        {"warnings", collapse_warnings(report)}};
  add_functions_json(out, report.outputs);
  return out;
}

} // namespace npucc::accuracy
