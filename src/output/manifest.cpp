#include "output/manifest.h"

#include "npucc/error.h"
#include "npucc/version.h"
#include "util/sha256.h"

#include <sstream>

namespace npucc::output {

using nlohmann::json;

namespace {

json file_json(const WrittenFile& file) {
  return {{"file", file.file}, {"sha256", file.sha256}, {"bytes", file.bytes}};
}

} // namespace

const std::string& options_component(const CacheKey& key) {
  for (const auto& component : key.components) {
    if (component.name == "options") {
      return component.value;
    }
  }
  throw Error("internal error: a cache key without its options component");
}

json schedule_json(const AccelerateTrainMode& mode) {
  std::ostringstream ratio;
  ratio << mode.ratio;
  std::string rule =
      mode.trigger == SwitchTrigger::step
          ? "run low first; switch to high, once and for good, when step >= floor(total_step * " +
                ratio.str() + ") or step + iterations_per_loop >= total_step"
          : "run low first; switch to high, once and for good, when loss != 0 and loss <= "
            "final_loss * " +
                ratio.str();
  return {{"mode", mode.to_string()},
          {"type", mode.type_name()},
          {"trigger", mode.trigger_name()},
          {"ratio", mode.ratio},
          {"first", "low"},
          {"then", "high"},
          {"rule", rule}};
}

namespace {

void add_precision(json& manifest, const CompileOptions& options, const CompileResult& result) {
  if (options.accelerate_train_mode) {
    manifest["schedule"] = schedule_json(*options.accelerate_train_mode);
  }
  if (!result.precision_report.empty()) {
    manifest["precision_report"] = json::parse(result.precision_report);
  }
  if (!result.high_precision_report.empty()) {
    manifest["high_precision_report"] = json::parse(result.high_precision_report);
  }
  if (!result.accuracy_report.empty()) {
    manifest["accuracy"] = json::parse(result.accuracy_report);
  }
  if (!result.drift_report.empty()) { // the file graph_writing.cpp writes beside the manifest
    manifest["drift_report"] = {{"file", k_drift_report_file},
                                {"sha256", util::sha256_hex(result.drift_report)},
                                {"bytes", result.drift_report.size()}};
  }
}

} // namespace

json memory_plan_json(const MemoryPlan& plan, bool with_tensors) {
  json out = {{"available", plan.available}};
  if (!plan.available) {
    out["reason"] = plan.reason;
    return out;
  }
  out["arena_bytes"] = plan.arena_bytes;
  out["lower_bound_bytes"] = plan.lower_bound_bytes;
  out["unshared_bytes"] = plan.unshared_bytes;
  out["alignment"] = plan.alignment;
  out["tensor_count"] = plan.tensors.size();
  if (with_tensors) {
    json tensors = json::array();
    for (const auto& tensor : plan.tensors) {
      tensors.push_back({{"name", tensor.name},
                         {"bytes", tensor.bytes},
                         {"offset", tensor.offset},
                         {"first", tensor.first},
                         {"last", tensor.last}});
    }
    out["tensors"] = std::move(tensors);
  }
  return out;
}

json key_components_json(const CacheKey& key) {
  json components = json::array();
  for (const auto& component : key.components) {
    json value = component.name == "options" ? json::parse(component.value) : json(component.value);
    components.push_back({{"name", component.name},
                          {"in_key", true},
                          {"digest", component.digest},
                          {"value", std::move(value)}});
  }
  for (const auto& omission : key.not_in_key) {
    components.push_back({{"name", omission.name},
                          {"in_key", false},
                          {"value", omission.value},
                          {"why", omission.why}});
  }
  return components;
}

bool restate_request(json& manifest, const CompileOptions& options, const CacheKey& key) {
  bool changed = false;
  auto restate = [&](json& field, json value) {
    if (field != value) {
      field = std::move(value);
      changed = true;
    }
  };
  auto model = manifest.find("model");
  if (model != manifest.end() && model->is_object()) {
    restate((*model)["file"], options.model_path.filename().string());
  }
  if (options.accelerate_train_mode) {
    restate(manifest["schedule"], schedule_json(*options.accelerate_train_mode));
  } else {
    changed = manifest.erase("schedule") > 0 || changed;
  }
  restate(manifest["cache_key"], key.key);
  restate(manifest["cache_key_components"], key_components_json(key));
  return changed;
}

json build_manifest(const CompileOptions& options, const Model& model, const CompileResult& result,
                    const CacheKey& cache_key) {
  json opsets = result.model_opsets;
  json graphs = json::array();
  for (const auto& graph : result.graphs) {
    json external = json::array();
    for (const auto& file : graph.external_data) {
      external.push_back(file_json(file));
    }
    json entry = file_json(graph.graph);
    entry["role"] = graph.role;
    entry["precision"] = graph.precision;
    if (!graph.emulates.empty()) {
      entry["emulates"] = graph.emulates;
    }
    entry["ir_version"] = graph.ir_version;
    entry["opsets"] = graph.opsets;
    entry["external_data"] = std::move(external);
    graphs.push_back(std::move(entry));
  }
  json passes = json::array();
  for (const auto& pass : result.passes) {
    passes.push_back({{"name", pass.name}, {"changed", pass.changed}, {"unit", pass.unit}});
  }
  json manifest = {
      {"format", "npucc-manifest"},
      {"format_version", k_manifest_format_version},
      {"compiler", {{"name", "npucc"}, {"version", k_version}}},
      {"model",
       {{"file", model.path.filename().string()},
        {"name", model.proto.graph().name()},
        {"sha256", result.model_sha256},
        {"bytes", model.file_bytes},
        {"ir_version", result.model_ir_version},
        {"opsets", opsets}}},
      // Through the cache, the options the key holds (no-ops left out: key/key_options.h).
      {"options", json::parse(cache_key.key.empty() ? canonical_options(options)
                                                    : options_component(cache_key))},
      {"graphs", std::move(graphs)},
      {"passes", std::move(passes)},
      {"memory_plan", memory_plan_json(result.memory_plan, true)},
  };
  add_precision(manifest, options, result);
  if (!cache_key.key.empty()) {
    manifest["cache_key"] = cache_key.key;
    manifest["cache_key_components"] = key_components_json(cache_key);
  }
  return manifest;
}

} // namespace npucc::output
