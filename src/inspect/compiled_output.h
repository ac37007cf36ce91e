#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>

// A graph inspect is given may be one npucc compiled: its output folder's manifest.json
// then lists it, and tells what inspect alone cannot (node precisions, the accuracy check).
namespace npucc::inspect {

struct CompiledGraph {
  nlohmann::json manifest; // null when `model` is not a graph of an npucc output folder
  std::string role;        // "high", "low", "emulation"
  std::filesystem::path folder; // the output folder
};

CompiledGraph compiled_graph(const std::filesystem::path& model);

// The accuracy report's lines (npucc-compile(1), ACCURACY) for a low or emulation graph an
// accuracy check measured; empty otherwise.
std::vector<std::string> accuracy_lines(const CompiledGraph& graph);

// The drift report (--accuracy-report nodes: the file the manifest's "drift_report" names)
// of a low or emulation graph, or null. Throws npucc::Error when the manifest names a file
// that is missing or not the drift report it wrote (its SHA-256 differs).
nlohmann::json drift_report(const CompiledGraph& graph);

} // namespace npucc::inspect
