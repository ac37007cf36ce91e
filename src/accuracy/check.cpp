// GCC 12 reports a "potential null pointer dereference" inside nlohmann::json's iterators
// when they are inlined into add_target_lines (a false positive: the values are checked).
#pragma GCC diagnostic ignored "-Wnull-dereference"

#include "accuracy/check.h"


#include <cmath>
#include <cstdio>

namespace npucc::accuracy {

std::vector<OutputMetrics> compare_sets(const std::vector<std::string>& names,
                                        const std::vector<runtime::TensorSet>& high,
                                        const std::vector<runtime::TensorSet>& low) {
  std::vector<OutputMetrics> out;
  for (size_t o = 0; o < names.size(); ++o) {
    OutputMetrics total;
    total.name = names[o];
    for (size_t s = 0; s < high.size() && s < low.size(); ++s) {
      merge(total, compare_output(high[s][o], low[s][o]));
    }
    out.push_back(total);
  }
  return out;
}

nlohmann::json report_json(const AccuracyReport& report) {
  nlohmann::json outputs = nlohmann::json::array();
  for (const auto& output : report.outputs) {
    outputs.push_back({{"name", output.name},
                       {"cosine", output.cosine},
                       {"max_abs_error", output.max_abs_error},
                       {"max_rel_error", output.max_rel_error},
                       {"nonfinite", output.nonfinite},
                       {"elements", output.elements}});
  }
  return {{"inputs", report.inputs},   {"samples", report.samples},
          {"compared", report.compared}, {"emulates", report.emulates},
          {"runtime", report.runtime}, {"runs", report.runs},
          {"outputs", outputs}};
}

namespace {

// Fields of the manifest's object, read without json::value() (whose string overload gcc 12
// warns about): a missing or mistyped field reads as empty or zero.
std::string text(const nlohmann::json& object, const char* key) {
  auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : std::string();
}

double number(const nlohmann::json& object, const char* key) {
  auto found = object.find(key);
  return found != object.end() && found->is_number() ? found->get<double>() : 0.0;
}

std::string fixed6(double value) {
  char out[64];
  std::snprintf(out, sizeof out, "%.6f", value);
  return out;
}

std::string short_number(double value) {
  char out[64];
  std::snprintf(out, sizeof out, "%.3g", value);
  return out;
}

std::string join(const nlohmann::json& names) {
  std::string out;
  for (const auto& name : names) {
    out += (out.empty() ? "" : ", ") + (name.is_string() ? name.get<std::string>() : "");
  }
  return out;
}

// "target cosine>=0.9995: met", or how the repair met it and what it kept.
void add_target_lines(const nlohmann::json& report, std::vector<std::string>& lines) {
  const std::string target = text(report, "target");
  if (target.empty()) {
    return;
  }
  auto repair = report.find("repair");
  if (repair == report.end() || !repair->is_object()) {
    lines.push_back("  target " + target + ": met by the low graph as compiled");
    return;
  }
  auto kept = repair->find("kept_units");
  const size_t count = kept != repair->end() && kept->is_array() ? kept->size() : 0;
  char timing[160];
  std::snprintf(timing, sizeof timing, "%lld graph runs in %.2f s",
                static_cast<long long>(number(*repair, "runs")), number(*repair, "seconds"));
  lines.push_back("  target " + target + ": missed by the low graph; met with " +
                  std::to_string(count) + " of " +
                  std::to_string(static_cast<int64_t>(number(*repair, "units"))) +
                  " units kept float32 (" + timing + "); the figures above are the repaired graph's");
  if (count == 0) {
    return;
  }
  for (const auto& unit : *kept) {
    const nlohmann::json* effect = nullptr;
    std::string nodes;
    if (unit.is_object()) {
      auto back_low = unit.find("returned_low");
      effect = back_low != unit.end() && back_low->is_object() ? &*back_low : nullptr;
      auto names = unit.find("nodes");
      nodes = names != unit.end() && names->is_array() ? join(*names) : std::string();
    }
    const double cosine = effect != nullptr ? number(*effect, "cosine") : 0.0;
    const auto nonfinite = effect != nullptr ? static_cast<int64_t>(number(*effect, "nonfinite")) : 0;
    const std::string why =
        effect == nullptr ? std::string(" (every unit kept: not measured alone)")
                          : " (returned alone to low precision: cosine " + fixed6(cosine) + ", " +
                                std::to_string(nonfinite) + " non-finite)";
    lines.push_back("    kept float32: " + (unit.is_object() ? text(unit, "op") : std::string()) +
                    " " + nodes + why);
  }
}

// The validation sets' figures (--validation-inputs, or sets held out of the search), apart
// from the search's.
void add_validation_lines(const nlohmann::json& report, std::vector<std::string>& lines) {
  auto validation = report.find("validation");
  if (validation == report.end() || !validation->is_object()) {
    return;
  }
  const bool held_out = text(*validation, "inputs") == "held-out";
  const auto sets = static_cast<int64_t>(number(*validation, "samples"));
  lines.push_back("  validation, " + std::to_string(sets) +
                  (held_out ? " set(s) held out of the search (" + text(*validation, "rule") + ")"
                            : std::string(" set(s) of --validation-inputs, never searched")) +
                  ":");
  auto outputs = validation->find("outputs");
  const nlohmann::json none = nlohmann::json::array();
  const bool listed = outputs != validation->end() && outputs->is_array();
  for (const auto& output : listed ? *outputs : none) {
    const auto nonfinite = static_cast<int64_t>(number(output, "nonfinite"));
    lines.push_back("    " + text(output, "name") + ": cosine " + fixed6(number(output, "cosine")) +
                    ", max abs error " + short_number(number(output, "max_abs_error")) +
                    ", max rel error " + short_number(number(output, "max_rel_error")) + ", " +
                    std::to_string(nonfinite) + " non-finite");
  }
}

} // namespace

std::vector<std::string> format_accuracy(const nlohmann::json& report) {
  const std::string inputs = text(report, "inputs");
  const auto samples = static_cast<int64_t>(number(report, "samples"));
  std::vector<std::string> lines;
  lines.push_back("accuracy: " + text(report, "emulates") +
                  " low graph (its emulation graph) against high, " +
                  (inputs == "random" ? std::string("1 random input set (fixed seed)")
                                      : std::to_string(samples) + " sample set(s)") +
                  ", " + text(report, "runtime"));
  auto outputs = report.find("outputs");
  if (outputs != report.end() && outputs->is_array()) {
    for (const auto& output : *outputs) {
      const auto nonfinite = static_cast<int64_t>(number(output, "nonfinite"));
      lines.push_back("  " + text(output, "name") + ": cosine " + fixed6(number(output, "cosine")) +
                      ", max abs error " + short_number(number(output, "max_abs_error")) +
                      ", max rel error " + short_number(number(output, "max_rel_error")) + ", " +
                      std::to_string(nonfinite) + " non-finite" +
                      (nonfinite > 0 ? " (float32 gives finite values there)" : ""));
    }
  }
  add_validation_lines(report, lines);
  add_target_lines(report, lines);
  if (inputs == "random") {
    lines.push_back("  random inputs can mislead (a detector on noise detects nothing): give "
                    "your own with --sample-inputs");
  }
  return lines;
}

} // namespace npucc::accuracy
