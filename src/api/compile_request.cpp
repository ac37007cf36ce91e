// compile_request() and cache_request() (npucc/compile_request.h): the CLI's options by
// name, for programs. Options backed by a setting (settings_table()) go through
// load_config() under their command-line name, so a bad value gets the message `npucc
// compile` gives; the others are read here with the CLI's wording.
#include "npucc/compile_request.h"

#include "npucc/error.h"
#include "precision/keep_dtype.h"
#include "util/bool_text.h"
#include "util/file_io.h"
#include "util/strings.h"

#include <algorithm>
#include <map>
#include <optional>

namespace npucc {

namespace {

// The settings row whose option is --NAME; nullptr when no setting has that option.
const SettingInfo* setting_of(const std::string& name) {
  for (const auto& info : settings_table()) {
    if (info.option == "--" + name) {
      return &info;
    }
  }
  return nullptr;
}

// The values given, checked against the names the caller may use: one value a name.
std::map<std::string, std::string> by_name(const std::vector<OptionValue>& values,
                                           const std::vector<std::string>& allowed,
                                           const std::string& what) {
  std::map<std::string, std::string> given;
  for (const auto& value : values) {
    if (std::find(allowed.begin(), allowed.end(), value.name) == allowed.end()) {
      std::string match = util::closest_match(value.name, allowed);
      throw usage_error("unknown " + what + " option \"" + value.name + "\"",
                        match.empty() ? "see npucc-" + what + "(1)"
                                      : "did you mean \"" + match + "\"?");
    }
    given[value.name] = value.value;
  }
  return given;
}

// load_config() with the settings among `given` as command-line values.
Config load_given_settings(const std::map<std::string, std::string>& given, const GetEnv& getenv) {
  ConfigSources sources;
  for (const auto& [name, value] : given) {
    if (const SettingInfo* info = setting_of(name)) {
      sources.command_line.push_back({info->key, value, "--" + name});
    }
  }
  auto options = given.find("options");
  if (options != given.end()) {
    sources.options_file = options->second;
  }
  sources.getenv = getenv;
  return load_config(sources);
}

class GivenOptions {
public:
  explicit GivenOptions(std::map<std::string, std::string> given) : m_given(std::move(given)) {}

  std::optional<std::string> text(const std::string& name) const {
    auto it = m_given.find(name);
    if (it == m_given.end() || it->second.empty()) {
      return std::nullopt;
    }
    return it->second;
  }

  bool flag(const std::string& name, bool otherwise) const {
    std::optional<std::string> value = text(name);
    if (!value) {
      return otherwise;
    }
    std::optional<bool> parsed = util::parse_bool_text(*value);
    if (!parsed) {
      throw usage_error("--" + name + ": \"" + *value + "\" is not a boolean",
                        "use true or false (or 1 / 0)");
    }
    return *parsed;
  }

private:
  std::map<std::string, std::string> m_given;
};

// A file an option names, read whole; an error names the option as the CLI does.
std::string read_option_file(const std::string& option, const std::string& path) {
  try {
    return util::read_file(path);
  } catch (const Error& e) {
    throw usage_error(option + " " + path + ": " + e.what());
  }
}

int64_t target_opset_of(const std::string& text) {
  int64_t opset = 0;
  if (!util::parse_int64(text, opset) || opset < 0) {
    throw usage_error("--target-opset " + text + ": expected an opset number");
  }
  return opset;
}

void apply_shape_options(const GivenOptions& given, CompileOptions& options) {
  if (auto shapes = given.text("input-shape")) {
    options.input_shapes = parse_input_shapes(*shapes);
  }
  options.external_data =
      given.flag("external-data", false) ? ExternalData::always : ExternalData::automatic;
  if (auto passes = given.text("passes")) {
    for (const auto& name : util::split(*passes, ',')) {
      options.passes.emplace_back(util::trim(name));
    }
  }
  if (auto opset = given.text("target-opset")) {
    options.target_opset = target_opset_of(*opset);
  }
}

void apply_precision_settings(const Config& settings, CompileOptions& options) {
  const std::string& mode = settings.value("accelerate_train_mode");
  if (!mode.empty()) {
    options.accelerate_train_mode = parse_accelerate_train_mode(mode);
  }
  options.precision.precision_mode = settings.value("precision_mode");
  options.precision.precision_mode_v2 = settings.value("precision_mode_v2");
  const std::string& mixlist = settings.value("modify_mixlist");
  if (!mixlist.empty()) {
    options.modify_mixlist = read_option_file("--modify-mixlist", mixlist);
    options.modify_mixlist_source = mixlist;
    if (options.modify_mixlist.empty()) {
      throw usage_error("--modify-mixlist " + mixlist + ": the file is empty");
    }
  }
  // Before the model is read, as the CLI does: a conflict then names both values' sources.
  validate_precision_options(options.precision, options.accelerate_train_mode,
                             {settings.get("accelerate_train_mode").origin,
                              settings.get("precision_mode").origin,
                              settings.get("precision_mode_v2").origin});
}

void apply_precision_flags(const GivenOptions& given, CompileOptions& options) {
  if (auto file = given.text("keep-dtype")) {
    options.keep_dtype_nodes = precision::parse_keep_dtype(read_option_file("--keep-dtype", *file));
    if (options.keep_dtype_nodes.empty()) {
      throw usage_error("--keep-dtype " + *file + ": the file names no node");
    }
  }
  options.keep_io_types = given.flag("keep-io-types", true);
  options.low_precision_weights = given.flag("low-precision-weights", false);
  options.emit_emulation = given.flag("emit-emulation", false);
}

} // namespace

const std::vector<std::string>& compile_option_names() {
  static const std::vector<std::string> names = {
      "input-shape",
      "external-data",
      "passes",
      "target-opset",
      "accelerate-train-mode",
      "precision-mode",
      "precision-mode-v2",
      "modify-mixlist",
      "keep-dtype",
      "keep-io-types",
      "low-precision-weights",
      "emit-emulation",
      "options",
      "cache-dir",
      "max-size",
      "read-only",
      "cache-shared",
      "cache-key-file",
      "link-mode",
      "digest-cache",
      "remote-cache",
      "remote-read-only",
      "remote-connect-timeout",
      "remote-timeout",
      "remote-token-file",
      "remote-credentials-file",
      "remote-ca-file",
      "remote-client-cert",
      "remote-client-key",
      "no-cache",
      "force",
      "max-memory",
  };
  return names;
}

const std::vector<std::string>& cache_option_names() {
  static const std::vector<std::string> names = {"cache-dir", "read-only", "cache-shared",
                                                 "cache-key-file", "options"};
  return names;
}

CompileRequest compile_request(const std::filesystem::path& model,
                               const std::filesystem::path& output,
                               const std::vector<OptionValue>& values, const GetEnv& getenv) {
  std::map<std::string, std::string> named = by_name(values, compile_option_names(), "compile");
  Config settings = load_given_settings(named, getenv);
  GivenOptions given(std::move(named));
  CompileRequest request;
  request.warnings = settings.warnings;
  CompileOptions& options = request.options;
  apply_shape_options(given, options);
  apply_precision_settings(settings, options);
  apply_precision_flags(given, options);
  options.model_path = model;
  options.output_dir = output;
  options.replace_output =
      given.flag("force", false) ? OutputReplace::any : OutputReplace::npucc_files;
  if (auto memory = given.text("max-memory")) {
    options.limits.max_memory_bytes = parse_memory_size(*memory);
  }
  request.cache = resolve_cache_config(settings);
  request.use = request.cache.disabled ? CacheUse::disabled : CacheUse::enabled;
  return request;
}

CacheRequest cache_request(const std::vector<OptionValue>& values, const GetEnv& getenv) {
  Config settings = load_given_settings(by_name(values, cache_option_names(), "cache"), getenv);
  return {resolve_cache_config(settings), settings.warnings};
}

} // namespace npucc
