#include "cache/manifest_reader.h"

#include "npucc/error.h"

#include <nlohmann/json.hpp>

namespace npucc::cache {

using nlohmann::json;

namespace {

WrittenFile written_from(const json& file) {
  return {file.value("file", ""), file.value("sha256", ""), file.value("bytes", uint64_t{0})};
}

} // namespace

CompileResult parse_cached_manifest(const std::string& text,
                                    const std::filesystem::path& manifest_path,
                                    const std::string& model_sha256) {
  CompileResult result;
  result.manifest_path = manifest_path;
  result.model_sha256 = model_sha256;
  json manifest;
  try {
    manifest = json::parse(text);
    for (const auto& graph : manifest.at("graphs")) {
      CompiledGraph compiled;
      compiled.role = graph.value("role", "");
      compiled.precision = graph.value("precision", "");
      compiled.graph = written_from(graph);
      for (const auto& data : graph.value("external_data", json::array())) {
        compiled.external_data.push_back(written_from(data));
      }
      result.graphs.push_back(std::move(compiled));
    }
    for (const auto& pass : manifest.value("passes", json::array())) {
      result.passes.push_back(
          {pass.value("name", ""), pass.value("unit", ""), pass.value("changed", int64_t{0})});
    }
    const json& plan = manifest.at("memory_plan");
    result.memory_plan.available = plan.value("available", false);
    result.memory_plan.reason = plan.value("reason", "");
    result.memory_plan.arena_bytes = plan.value("arena_bytes", uint64_t{0});
    result.memory_plan.lower_bound_bytes = plan.value("lower_bound_bytes", uint64_t{0});
    result.memory_plan.unshared_bytes = plan.value("unshared_bytes", uint64_t{0});
    result.memory_plan.alignment = plan.value("alignment", uint64_t{64});
    for (const auto& tensor : plan.value("tensors", json::array())) {
      result.memory_plan.tensors.push_back(
          {tensor.value("name", ""), tensor.value("bytes", uint64_t{0}),
           tensor.value("offset", uint64_t{0}), tensor.value("first", 0), tensor.value("last", 0)});
    }
  } catch (const json::exception& e) {
    throw Error(manifest_path.string() + ": cached manifest is not readable: " + e.what());
  }
  return result;
}

} // namespace npucc::cache
