#include "config/options_file.h"

#include "npucc/error.h"
#include "util/file_io.h"
#include "util/strings.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace npucc::config {

const std::vector<std::string>& ignored_ascend_keys() {
  // From NPURunConfig, ExperimentalConfig and GE session options: they steer the device,
  // the runtime or Ascend's own op compiler, none of which an offline ONNX compile has.
  static const std::vector<std::string> keys = {"auto_tune_mode",
                                                "customize_dtypes",
                                                "debug_dir",
                                                "deterministic",
                                                "distribute_config",
                                                "dump_mode",
                                                "dump_path",
                                                "dump_step",
                                                "dynamic_graph_execute_mode",
                                                "dynamic_input",
                                                "dynamic_inputs_shape_range",
                                                "enable_compress_weight",
                                                "enable_data_pre_proc",
                                                "enable_dump",
                                                "enable_dump_debug",
                                                "enable_exception_dump",
                                                "enable_small_channel",
                                                "external_weight",
                                                "fusion_switch_file",
                                                "graph_memory_max_size",
                                                "graph_run_mode",
                                                "hcom_parallel",
                                                "iterations_per_loop",
                                                "jit_compile",
                                                "keep_dtype",
                                                "local_device_list",
                                                "local_rank_id",
                                                "memory_optimization_policy",
                                                "mix_compile_mode",
                                                "op_compiler_cache_dir",
                                                "op_compiler_cache_mode",
                                                "op_debug_config",
                                                "op_debug_level",
                                                "op_execute_timeout",
                                                "op_precision_mode",
                                                "op_select_implmode",
                                                "op_wait_timeout",
                                                "optypelist_for_implmode",
                                                "profiling_mode",
                                                "profiling_options",
                                                "resource_config_path",
                                                "session_device_id",
                                                "soc_version",
                                                "static_memory_policy",
                                                "stream_max_parallel_num",
                                                "topo_sorting_mode",
                                                "variable_format_optimize",
                                                "variable_memory_max_size"};
  return keys;
}

namespace {

nlohmann::json parse_json(const std::filesystem::path& file) {
  std::string text;
  try {
    text = util::read_file(file);
  } catch (const Error& e) {
    throw Error(std::string("cannot read the options file: ") + e.what(),
                "check the --options path");
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 2, column 5: ..." -> from "line".
    std::string message = e.what();
    size_t at = message.find("line ");
    throw Error(file.string() +
                    ": not valid JSON: " + (at == std::string::npos ? message : message.substr(at)),
                "an options file is one JSON object of Ascend option names and values");
  }
}

std::string scalar_text(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

} // namespace

OptionsFile read_options_file(const std::filesystem::path& file) {
  nlohmann::json json = parse_json(file);
  const std::string name = file.string();
  if (!json.is_object()) {
    throw Error(
        name + ": an options file must be a JSON object, not " + std::string(json.type_name()),
        "write {\"graph_compiler_cache_dir\": \"...\", \"accelerate_train_mode\": \"...\"}");
  }
  std::vector<std::string> known;
  for (const auto& info : settings_table()) {
    if (!info.ascend_key.empty()) {
      known.push_back(info.ascend_key);
    }
  }
  const auto& ignored = ignored_ascend_keys();
  OptionsFile result;
  for (const auto& [key, value] : json.items()) {
    const SettingInfo* info = nullptr;
    for (const auto& row : settings_table()) {
      if (!row.ascend_key.empty() && row.ascend_key == key) {
        info = &row;
      }
    }
    if (info != nullptr) {
      if (!value.is_string()) {
        throw usage_error(name + ": " + key + " must be a string, not " +
                              std::string(value.type_name()),
                          "Ascend takes every option as a string");
      }
      result.values.push_back({info->key, key, value.get<std::string>()});
    } else if (std::find(ignored.begin(), ignored.end(), key) != ignored.end()) {
      if (!(value.is_string() && value.get<std::string>().empty()) && !value.is_null()) {
        result.warnings.push_back(name + ": Ascend option " + key + " (" +
                                  util::cut_for_message(scalar_text(value)) +
                                  ") does not apply to an offline compile; ignored");
      }
    } else {
      std::vector<std::string> candidates = known;
      candidates.insert(candidates.end(), ignored.begin(), ignored.end());
      // A long key is neither matched (the edit distance costs its length) nor echoed whole.
      std::string match = key.size() <= 64 ? util::closest_match(key, candidates) : "";
      throw usage_error(name + ": unknown option \"" + util::cut_for_message(key) + "\"",
                        match.empty() ? "npucc reads: " + util::join(known, ", ")
                                      : "did you mean \"" + match + "\"?");
    }
  }
  return result;
}

} // namespace npucc::config
