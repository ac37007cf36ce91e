// The drift report's short text (drift_report.h: format_drift), from its JSON document, so
// `npucc inspect` prints what the compile printed.
#include "accuracy/drift_report.h"

#include "util/text_table.h"

#include <algorithm>
#include <cstdio>

namespace npucc::accuracy {

namespace {

// Figures as the table shows them: "-" for null.
enum class Digits { cosine, short_figure, full };

std::string drift_cell(const nlohmann::json& value, const char* key, Digits digits) {
  auto found = value.find(key);
  if (found == value.end() || !found->is_number()) {
    return "-";
  }
  char out[64];
  const double number = found->get<double>();
  if (digits == Digits::cosine) {
    std::snprintf(out, sizeof out, "%.6f", number);
  } else if (digits == Digits::short_figure) {
    std::snprintf(out, sizeof out, "%.3g", number);
  } else {
    std::snprintf(out, sizeof out, "%.10g", number);
  }
  return out;
}

std::string drift_field(const nlohmann::json& value, const char* key) {
  auto found = value.find(key);
  return found != value.end() && found->is_string() ? found->get<std::string>() : "";
}

// A node as the table names it: a body's with its graph ("loop:body/matmul").
std::string drift_node(const nlohmann::json& value) {
  const std::string graph = drift_field(value, "graph");
  const std::string node = drift_field(value, "node");
  return graph.rfind("main/", 0) == 0 ? graph.substr(5) + "/" + node : node;
}

void add_drift_row(util::TextTable& table, const nlohmann::json& value, const std::string& mark) {
  const std::string order = value.contains("order") ? value.at("order").dump() : "?";
  table.add_row({mark, "#" + order, drift_field(value, "op_type"), drift_node(value),
                 drift_field(value, "stored"), drift_cell(value, "cosine", Digits::cosine),
                 drift_cell(value, "max_abs_error", Digits::short_figure),
                 drift_cell(value, "flush_share", Digits::short_figure),
                 drift_cell(value, "overflow_share", Digits::short_figure),
                 drift_cell(value, "high_max_abs", Digits::short_figure),
                 drift_cell(value, "added_drift", Digits::short_figure)});
}

// The line above the table: how many values, and where the drift begins.
std::string drift_headline(const nlohmann::json& report) {
  const auto& values = report.at("values");
  const std::string below = drift_cell(report.at("threshold"), "below", Digits::full);
  std::string line = "drift: " + std::to_string(values.size()) + " value(s) over " +
                     report.at("sample_sets").dump() + " sample set(s), " +
                     report.at("runtime_runs").dump() + " runtime run(s); ";
  const auto& first = report.at("first_crossing");
  if (!first.is_number_unsigned() || first.get<size_t>() >= values.size()) {
    return line + "no value below cosine " + below;
  }
  const auto& value = values.at(first.get<size_t>());
  const std::string graph = drift_field(value, "graph");
  const std::string where = graph.empty() || graph == "main" ? "" : " in " + graph;
  return line + "first below cosine " + below + ": #" + value.at("order").dump() + " " +
         drift_field(value, "op_type") + " '" + drift_field(value, "node") + "' (value '" +
         drift_field(value, "value") + "'" + where + ")";
}

} // namespace

std::vector<std::string> format_drift(const nlohmann::json& report) {
  if (!report.is_object() || !report.contains("values") || !report.at("values").is_array()) {
    return {};
  }
  std::vector<std::string> lines{drift_headline(report)};
  const auto& values = report.at("values");
  util::TextTable table("llllrrrrrrr", "  ");
  table.add_row({"", "order", "op", "node", "stored", "cosine", "max_abs_err", "flush",
                 "overflow", "high_max", "added"});
  const auto& first = report.at("first_crossing");
  const auto& top = report.at("top_offenders");
  if (first.is_number_unsigned() && first.get<size_t>() < values.size()) {
    const bool also_top = std::find(top.begin(), top.end(), first) != top.end();
    add_drift_row(table, values.at(first.get<size_t>()), also_top ? "first,top" : "first");
  }
  for (const auto& index : top) {
    if (index.is_number_unsigned() && index.get<size_t>() < values.size() && index != first) {
      add_drift_row(table, values.at(index.get<size_t>()), "top");
    }
  }
  std::string rendered = table.render();
  for (size_t start = 0; start < rendered.size();) {
    size_t end = rendered.find('\n', start);
    end = end == std::string::npos ? rendered.size() : end;
    lines.push_back(rendered.substr(start, end - start));
    start = end + 1;
  }
  if (report.contains("not_covered") && !report.at("not_covered").empty()) {
    lines.push_back("  not covered: " + std::to_string(report.at("not_covered").size()) +
                    " If/Loop/Scan body graph(s), with the reason in drift.json's not_covered");
  }
  return lines;
}

} // namespace npucc::accuracy
