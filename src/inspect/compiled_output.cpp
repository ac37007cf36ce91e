#include "inspect/compiled_output.h"

#include "accuracy/check.h"
#include "npucc/error.h"
#include "util/file_io.h"
#include "util/sha256.h"
#include "util/json_fields.h"

namespace npucc::inspect {

CompiledGraph compiled_graph(const std::filesystem::path& model) {
  try {
    auto manifest = nlohmann::json::parse(util::read_file(model.parent_path() / "manifest.json"));
    if (util::string_field(manifest, "format") != "npucc-manifest") {
      return {};
    }
    for (const auto& graph : manifest.at("graphs")) {
      if (util::string_field(graph, "file") == model.filename().string()) {
        return {std::move(manifest), util::string_field(graph, "role"), model.parent_path()};
      }
    }
  } catch (const std::exception&) {
    // no manifest beside it, or not one of ours: a model like any other
  }
  return {};
}

std::vector<std::string> accuracy_lines(const CompiledGraph& graph) {
  if (graph.role == "high" || !graph.manifest.is_object() || !graph.manifest.contains("accuracy") ||
      !graph.manifest.at("accuracy").is_object()) {
    return {};
  }
  return accuracy::format_accuracy(graph.manifest.at("accuracy"));
}

nlohmann::json drift_report(const CompiledGraph& graph) {
  if (graph.role == "high" || !graph.manifest.is_object() ||
      !graph.manifest.contains("drift_report") || !graph.manifest.at("drift_report").is_object()) {
    return nullptr;
  }
  const auto& named = graph.manifest.at("drift_report");
  const auto path = graph.folder / util::string_field(named, "file");
  const std::string text = util::read_file(path);
  if (util::sha256_hex(text) != util::string_field(named, "sha256")) {
    throw Error(path.string() + ": not the drift report the compile wrote (its SHA-256 "
                "differs from the manifest's)",
                "compile again with --accuracy-report nodes");
  }
  return nlohmann::json::parse(text);
}

} // namespace npucc::inspect
