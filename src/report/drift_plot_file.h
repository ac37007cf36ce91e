#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>

// The drift picture's files: where a compiled output keeps its drift report, and writing
// the picture of one (report/drift_plot.h draws it).
namespace npucc::report {

// The drift report of the compiled output `output`: its folder, or a file in it (a graph,
// manifest.json). Throws npucc::Error when it is no npucc output folder or holds no drift
// report (the hint says how to make one).
std::filesystem::path drift_report_of_output(const std::filesystem::path& output);

// The drift report's file name a manifest gives ("drift.json" when it names none).
std::string drift_report_name(const nlohmann::json& manifest);

// Draws the drift report `drift` (a compile's, in memory) to `svg`, written beside it under a
// temporary name and renamed over it, so a failure leaves no half file. An existing `svg`
// that is not an SVG document is refused, not replaced: the name is likely a slip.
// Returns what was drawn, for a terminal: "120 values, first below 0.9999: #43 NODE (Conv)".
std::string write_drift_plot(const nlohmann::json& drift, const std::filesystem::path& svg);

// The same for the drift report in the file `drift_json`; errors name that file.
std::string write_drift_plot_file(const std::filesystem::path& drift_json,
                                  const std::filesystem::path& svg);

} // namespace npucc::report
