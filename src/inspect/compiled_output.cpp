#include "inspect/compiled_output.h"

#include "accuracy/check.h"
#include "util/file_io.h"
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
        return {std::move(manifest), util::string_field(graph, "role")};
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

} // namespace npucc::inspect
