#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

// The drift picture's files: where a compiled output keeps its drift report, and writing
// the picture of one (report/drift_plot.h draws it).
namespace npucc::report {

// A compiled output's drift report: its file and its text, as read once and checked.
struct OutputDriftReport {
  std::filesystem::path path;
  std::string text;
};

// The drift report of the compiled output `output` (its folder, or a file in it: a graph,
// manifest.json): the file the manifest's "drift_report" names, whose SHA-256 must be the
// one the manifest records. Throws npucc::Error when it is no npucc output folder, when the
// manifest names no drift report ("this output has no drift report"; a drift.json in the
// folder that the manifest does not name is another compile's, never drawn), or when the
// named file is missing or differs (the hint says how to make one).
OutputDriftReport drift_report_of_output(const std::filesystem::path& output);

// Draws the drift report `drift` (a compile's, in memory) to `svg`, written beside it under a
// temporary name and renamed over it, so a failure leaves no half file. An existing `svg`
// that is not an SVG document is refused, not replaced: the name is likely a slip.
// Returns what was drawn, for a terminal: "120 values, first below 0.9999: #43 NODE (Conv)".
std::string write_drift_plot(const nlohmann::json& drift, const std::filesystem::path& svg);

// The same for a compiled output's drift report; errors name its file.
std::string write_drift_plot_file(const OutputDriftReport& report,
                                  const std::filesystem::path& svg);

} // namespace npucc::report
