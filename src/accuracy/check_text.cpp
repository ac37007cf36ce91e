// The accuracy report's text (check.h: format_accuracy): short, from the manifest's object,
// so a cache hit prints what the compile printed.
// GCC 12 reports a "potential null pointer dereference" inside nlohmann::json's iterators
// when they are inlined into add_target_lines (a false positive: the values are checked).
#pragma GCC diagnostic ignored "-Wnull-dereference"

#include "accuracy/check.h"
#include "util/strings.h"

#include "accuracy/target.h"

#include <cmath>
#include <cstdio>

namespace npucc::accuracy {

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
  auto ranges = report.find("activation_ranges");
  if (ranges != report.end() && ranges->is_object() && !ranges->value("kept", nlohmann::json()).empty()) {
    std::vector<std::string> kept;
    for (const auto& [node, why] : ranges->at("kept").items()) {
      kept.push_back(node + " (" + (why.is_string() ? why.get<std::string>() : "") + ")");
    }
    lines.push_back("  target " + target + ": missed by the low graph; the activation-range rule kept " +
                    std::to_string(kept.size()) + " node(s) float32 (" +
                    std::to_string(static_cast<int64_t>(number(*ranges, "runs"))) +
                    " run(s) of the high graph): " + util::join(kept, ", "));
  }
  auto repair = report.find("repair");
  if (repair == report.end() || !repair->is_object()) {
    lines.push_back("  target " + target + (ranges != report.end() ? ": met after the rule, no search"
                                                                   : ": met by the low graph as compiled"));
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
    auto cosine = effect != nullptr ? effect->find("cosine") : unit.end();
    const std::string cosine_text = effect != nullptr && cosine != effect->end() && cosine->is_number()
                                        ? fixed6(cosine->get<double>())
                                        : "undefined"; // an output too small for one, or broken
    const auto nonfinite = effect != nullptr ? static_cast<int64_t>(number(*effect, "nonfinite")) : 0;
    const std::string why =
        effect == nullptr ? std::string(" (every unit kept: not measured alone)")
                          : " (returned alone to low precision: cosine " + cosine_text + ", " +
                                std::to_string(nonfinite) + " non-finite)";
    lines.push_back("    kept float32: " + (unit.is_object() ? text(unit, "op") : std::string()) +
                    " " + nodes + why);
  }
}

// "descent: 9 of 13 deny-list node(s) lowered with the target met (3 graphs, 12 runs)".
void add_descent_line(const nlohmann::json& report, std::vector<std::string>& lines) {
  auto descent = report.find("descent");
  if (descent == report.end() || !descent->is_object() || number(*descent, "candidates") == 0) {
    return;
  }
  auto lowered = descent->find("lowered");
  const size_t count = lowered != descent->end() && lowered->is_array() ? lowered->size() : 0;
  lines.push_back("  descent: " + std::to_string(count) + " of " +
                  std::to_string(static_cast<int64_t>(number(*descent, "candidates"))) +
                  " deny-list node(s) lowered with the target still met (" +
                  std::to_string(static_cast<int64_t>(number(*descent, "evaluations"))) +
                  " graph(s), " + std::to_string(static_cast<int64_t>(number(*descent, "runs"))) +
                  " runs)" + (count == 0 ? "" : ": " + join(*lowered)));
}

// A summary field: the number, "inf", or empty for null/missing.
std::string figure_text(const nlohmann::json& summary, const char* key, bool fixed) {
  auto found = summary.find(key);
  if (found == summary.end() || found->is_null()) {
    return {};
  }
  if (found->is_string()) {
    return found->get<std::string>();
  }
  return fixed ? fixed6(found->get<double>()) : short_number(found->get<double>());
}

std::string set_source(const nlohmann::json& report, const nlohmann::json& summary) {
  auto set = summary.find("worst_set");
  auto sets = report.find("sets");
  if (set == summary.end() || !set->is_number_integer() || sets == report.end() ||
      !sets->is_array() || set->get<size_t>() >= sets->size()) {
    return {};
  }
  return text((*sets)[set->get<size_t>()], "source");
}

// "worst 0.999123, median 0.999500 (worst set a.npz)" with several sets; the worst alone
// with one.
std::string worst_and_median(const nlohmann::json& report, const nlohmann::json& summary,
                             bool fixed) {
  const std::string worst = figure_text(summary, "worst", fixed);
  if (number(report, "samples") < 2) {
    return worst;
  }
  const std::string source = set_source(report, summary);
  return worst + " (median " + figure_text(summary, "median", fixed) +
         (source.empty() ? "" : ", worst set " + source) + ")";
}

const nlohmann::json& summary_of(const nlohmann::json& output, const std::string& figure) {
  static const nlohmann::json none = nlohmann::json::object();
  auto summary = output.find("summary");
  if (summary == output.end() || !summary->is_object() || !summary->contains(figure)) {
    return none;
  }
  return (*summary)[figure];
}

std::string undefined_reason(const nlohmann::json& output, const char* figure) {
  auto undefined = output.find("undefined");
  return undefined != output.end() && undefined->is_object() ? text(*undefined, figure)
                                                             : std::string();
}

// One line per output: the cosine (or why it has none), the errors, the non-finite count.
std::string output_line(const nlohmann::json& report, const nlohmann::json& output) {
  const auto nonfinite = static_cast<int64_t>(number(output, "nonfinite"));
  const std::string errors = figure_text(output, "max_abs_error", false);
  const std::string error_text =
      errors.empty() ? "no element finite in both to compare"
                     : "max abs error " + errors + ", max rel error " +
                           figure_text(output, "max_rel_error", false);
  const std::string counts = ", " + std::to_string(nonfinite) + " non-finite" +
                             (nonfinite > 0 ? " (float32 gives finite values there)" : "");
  auto cosine = output.find("cosine");
  if (cosine == output.end() || !cosine->is_number()) {
    return text(output, "name") + ": cosine undefined (" + undefined_reason(output, "cosine") +
           "); judged by its errors: " + error_text + counts;
  }
  const auto& summary = summary_of(output, "cosine"); // none in an older build's manifest
  std::string line = text(output, "name") + ": cosine " +
                     (summary.contains("worst") ? worst_and_median(report, summary, true)
                                                : fixed6(cosine->get<double>())) +
                     ", " + error_text + counts;
  const std::string some = undefined_reason(output, "cosine");
  return some.empty() ? line : line + "; cosine undefined on some sets: " + some;
}

// The task figures a target names, per output it applies to: "y: top1 0.98 (median ...)".
void add_target_figures(const nlohmann::json& report, const nlohmann::json& output,
                        std::vector<std::string>& lines) {
  const std::string target = text(report, "target");
  if (target.empty()) {
    return;
  }
  for (const auto& clause : parse_accuracy_target({target}).clauses) {
    const bool task = clause.metric != "cosine" && clause.metric != "nonfinite" &&
                      clause.metric.rfind("max_", 0) != 0 && !is_function_metric(clause.metric);
    if (!task || (!clause.output.empty() && clause.output != text(output, "name"))) {
      continue;
    }
    const auto& summary = summary_of(output, clause.metric);
    const std::string worst = figure_text(summary, "worst", false);
    lines.push_back("  " + text(output, "name") + ": " + clause.metric + " " +
                    (worst.empty() ? "undefined (" + undefined_reason(output, clause.metric.c_str()) + ")"
                                   : worst_and_median(report, summary, false)));
  }
}

void add_output_lines(const nlohmann::json& report, std::vector<std::string>& lines) {
  auto outputs = report.find("outputs");
  if (outputs == report.end() || !outputs->is_array()) {
    return;
  }
  for (const auto& output : *outputs) {
    lines.push_back("  " + output_line(report, output));
    add_target_figures(report, output, lines);
    const auto high = static_cast<int64_t>(number(output, "high_nonfinite"));
    if (high > 0) {
      lines.push_back("  " + text(output, "name") + ": the high graph itself gives " +
                      std::to_string(high) + " non-finite value(s) (float32): not compared");
    }
  }
  auto warnings = report.find("warnings");
  if (warnings != report.end() && warnings->is_array()) {
    for (const auto& warning : *warnings) {
      lines.push_back("  warning: " + (warning.is_string() ? warning.get<std::string>() : ""));
    }
  }
}

// A caller's functions (npucc.Target): a check's sets held, a score's worst and median.
void add_function_lines(const nlohmann::json& report, const nlohmann::json& block,
                        const std::string& indent, std::vector<std::string>& lines) {
  auto functions = block.find("functions");
  if (functions == block.end() || !functions->is_array()) {
    return;
  }
  for (const auto& function : *functions) {
    const std::string name = text(function, "name");
    auto per_sample = function.find("per_sample");
    const size_t sets = per_sample != function.end() ? per_sample->size() : 0;
    if (name.rfind("check[", 0) == 0) {
      lines.push_back(indent + name + ": holds on " +
                      std::to_string(static_cast<int64_t>(number(function, "sets_held"))) +
                      " of " + std::to_string(sets) + " set(s)");
    } else {
      const std::string worst = figure_text(function, "worst", false);
      lines.push_back(indent + name + ": " +
                      (worst.empty() ? "undefined on every set"
                                     : worst_and_median(report, function, false)));
    }
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
  if (outputs == validation->end() || !outputs->is_array()) {
    return;
  }
  for (const auto& output : *outputs) {
    lines.push_back("    " + output_line(*validation, output));
  }
  add_function_lines(*validation, *validation, "    ", lines);
}

} // namespace

std::vector<std::string> format_figures(const nlohmann::json& report) {
  std::vector<std::string> lines;
  add_output_lines(report, lines);
  add_function_lines(report, report, "  ", lines);
  add_validation_lines(report, lines);
  return lines;
}

std::vector<std::string> format_accuracy(const nlohmann::json& report) {
  const std::string inputs = text(report, "inputs");
  const auto samples = static_cast<int64_t>(number(report, "samples"));
  std::vector<std::string> lines;
  lines.push_back("accuracy: " + text(report, "emulates") +
                  " low graph (its emulation graph) against high, " +
                  (inputs == "random" ? std::string("1 random input set (fixed seed)")
                                      : std::to_string(samples) + " sample set(s)") +
                  ", " + text(report, "runtime"));
  for (auto& line : format_figures(report)) {
    lines.push_back(std::move(line));
  }
  add_target_lines(report, lines);
  add_descent_line(report, lines);
  if (inputs == "random") {
    lines.push_back("  random inputs can mislead (a detector on noise detects nothing): give "
                    "your own with --sample-inputs");
  }
  return lines;
}

} // namespace npucc::accuracy
