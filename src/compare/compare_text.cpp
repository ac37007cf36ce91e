// The text report of `npucc compare` (compare.h: format_compare), from its JSON document.
#include "compare/compare.h"

#include "accuracy/check.h"
#include "accuracy/drift_report.h"

#include <utility>

namespace npucc::compare {

namespace {

std::string string_field(const nlohmann::json& object, const char* key) {
  auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : std::string();
}

// "input 'x': float32 samples rounded to float16, as the candidate takes them".
std::string conversion_line(const nlohmann::json& conversion, bool emulated) {
  const std::string name = string_field(conversion, "name");
  const std::string low = string_field(conversion, "candidate_type");
  if (string_field(conversion, "kind") == "input") {
    return "input '" + name + "': the candidate takes " + low + ": the float32 samples are " +
           (emulated ? "rounded to " + low + " (the emulation's round trip)"
                     : "cast to " + low + " before it");
  }
  return "output '" + name + "': the candidate gives " + low + ", compared exactly as float32";
}

std::string target_line(const nlohmann::json& accuracy) {
  const std::string target = string_field(accuracy, "target");
  auto meets = accuracy.find("meets_target");
  const bool met = meets != accuracy.end() && meets->is_boolean() && meets->get<bool>();
  return "target " + target + ": " +
         (met ? std::string("met by the candidate")
              : std::string("MISSED by the candidate (no repair: compare measures, it does "
                            "not change the candidate)"));
}

// The check's lines speak of the high and the low graph; here they are the reference and the
// candidate.
std::string in_compare_words(std::string line) {
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"the low graph", "the candidate"},
                                 {"the high graph", "the reference"}}) {
    for (size_t at = line.find(from); at != std::string::npos; at = line.find(from, at + to.size())) {
      line.replace(at, from.size(), to);
    }
  }
  return line;
}

} // namespace

std::vector<std::string> format_compare(const nlohmann::json& report) {
  const nlohmann::json& accuracy = report.at("accuracy");
  const bool emulated = string_field(report, "run") == "emulated";
  const bool random = string_field(accuracy, "inputs") == "random";
  const auto samples = accuracy.value("samples", int64_t{0});
  std::vector<std::string> lines;
  lines.push_back("compare: " + string_field(report, "candidate") + " (" +
                  string_field(report, "candidate_run") + ") against " + string_field(report, "reference") +
                  " (ONNX Runtime as-is), " +
                  (random ? std::string("1 random input set (fixed seed)")
                          : std::to_string(samples) + " sample set(s)") +
                  ", " + string_field(accuracy, "runtime"));
  if (emulated && report.value("rounded_values", int64_t{0}) > 0) {
    lines.push_back("  every float16/bfloat16 value the candidate stores is rounded where it is "
                    "stored (" + std::to_string(report.value("rounded_values", int64_t{0})) +
                    " values): what float16/bfloat16 hardware computes");
  }
  for (const auto& conversion : report.at("conversions")) {
    lines.push_back("  " + conversion_line(conversion, emulated));
  }
  for (const auto& line : accuracy::format_figures(accuracy)) {
    lines.push_back(in_compare_words(line));
  }
  if (accuracy.contains("target")) {
    lines.push_back("  " + target_line(accuracy));
  }
  if (report.contains("drift") && report.at("drift").is_object()) {
    const auto& drift = report.at("drift");
    for (const auto& line : accuracy::format_drift(drift)) {
      lines.push_back(line);
    }
    const auto unmatched = drift.value("unmatched_values", int64_t{0});
    if (unmatched > 0) {
      lines.push_back("  " + std::to_string(unmatched) + " value" + (unmatched == 1 ? "" : "s") +
                      " of the candidate " + (unmatched == 1 ? "has" : "have") +
                      " no same-named value in the reference: not measured");
    }
  }
  if (random) {
    lines.push_back("  random inputs can mislead (a detector on noise detects nothing): give "
                    "your own with --sample-inputs");
  }
  return lines;
}

} // namespace npucc::compare
