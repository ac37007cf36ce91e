// The request builder (config/compile_request.h) and the public compile_request() and
// cache_request() over it (npucc/compile_request.h). Every name and value goes through
// the option table (config/option_table.h): settings through load_config() under their
// option's name, the rest through the row's apply function.
#include "config/compile_request.h"

#include "accuracy/drift_report.h"
#include "config/option_table.h"
#include "npucc/error.h"
#include "npucc/train_mode.h"
#include "util/strings.h"

#include <algorithm>
#include <map>

namespace npucc {

namespace {

// The names of the rows in `groups`, in table order.
std::vector<std::string> names_in(std::initializer_list<config::OptionGroup> groups) {
  std::vector<std::string> names;
  for (const auto& row : config::option_table()) {
    if (std::find(groups.begin(), groups.end(), row.group) != groups.end()) {
      names.push_back(row.name);
    }
  }
  return names;
}

// The values given, checked against the names the caller may use.
void check_names(const std::vector<OptionValue>& values, const std::vector<std::string>& allowed,
                 const std::string& what) {
  for (const auto& value : values) {
    if (std::find(allowed.begin(), allowed.end(), value.name) == allowed.end()) {
      std::string match = util::closest_match(value.name, allowed);
      throw usage_error("unknown " + what + " option \"" + value.name + "\"",
                        match.empty() ? "see npucc-" + what + "(1)"
                                      : "did you mean \"" + match + "\"?");
    }
  }
}

// The last value given for each name.
std::map<std::string, OptionValue> by_name(const std::vector<OptionValue>& values) {
  std::map<std::string, OptionValue> given;
  for (const auto& value : values) {
    given[value.name] = value;
  }
  return given;
}

} // namespace

namespace config {

Config load_given_settings(const std::vector<OptionValue>& given, const GetEnv& getenv) {
  ConfigSources sources;
  for (const auto& [name, value] : by_name(given)) {
    const OptionRow* row = find_option(name);
    if (row == nullptr) {
      throw Error("internal error: no option --" + name);
    }
    if (row->group == OptionGroup::options_file) {
      sources.options_file = value.value;
    } else if (is_setting(*row)) {
      sources.command_line.push_back(
          {row->setting.key, value.value, option_spelling(*row), value.given_empty});
    }
  }
  sources.getenv = getenv;
  return load_config(sources);
}

CompileOptions build_compile_options(const std::vector<OptionValue>& given,
                                     const Config& settings) {
  std::map<std::string, OptionValue> named = by_name(given);
  CompileOptions options;
  for (const auto& row : option_table()) {
    if (row.apply == nullptr) {
      continue;
    }
    if (row.arity == OptionArity::repeated) {
      for (const auto& value : given) {
        if (value.name == row.name) {
          row.apply(row, value.value, options);
        }
      }
      continue;
    }
    auto found = named.find(row.name);
    std::string text = is_setting(row)        ? settings.value(row.setting.key)
                       : found != named.end() ? found->second.value
                                              : std::string();
    if (!text.empty()) {
      row.apply(row, text, options);
    }
  }
  // Checked here, before the model is read, so a conflict names the sources of both
  // values (the compile's own check can only name the model).
  validate_precision_options(options.precision, options.accelerate_train_mode,
                             {settings.get("accelerate_train_mode").origin,
                              settings.get("precision_mode").origin,
                              settings.get("precision_mode_v2").origin});
  if (options.accuracy_report.empty() && options.drift_threshold != accuracy::k_default_drift_threshold) {
    throw usage_error("--drift-threshold sets where the drift report calls a value out, and "
                      "no drift report is asked for",
                      "add --accuracy-report nodes, or drop --drift-threshold");
  }
  return options;
}

} // namespace config

const std::vector<std::string>& compile_option_names() {
  using G = config::OptionGroup;
  static const std::vector<std::string> names =
      names_in({G::compile, G::options_file, G::cache, G::max_size, G::link_mode, G::digest_cache,
                G::remote, G::no_cache, G::output});
  return names;
}

const std::vector<std::string>& cache_option_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out = names_in({config::OptionGroup::cache});
    std::vector<std::string> file = names_in({config::OptionGroup::options_file});
    out.insert(out.end(), file.begin(), file.end());
    return out;
  }();
  return names;
}

std::vector<OptionDescription> describe_options(const std::vector<std::string>& names) {
  std::vector<OptionDescription> out;
  for (const auto& name : names) {
    const config::OptionRow* row = config::find_option(name);
    if (row == nullptr) {
      throw Error("no option --" + name);
    }
    out.push_back({name, config::value_type_name(*row)});
  }
  return out;
}

CompileRequest compile_request(const std::filesystem::path& model,
                               const std::filesystem::path& output,
                               const std::vector<OptionValue>& values, const GetEnv& getenv) {
  check_names(values, compile_option_names(), "compile");
  Config settings = config::load_given_settings(values, getenv);
  CompileRequest request;
  request.warnings = settings.warnings;
  request.options = config::build_compile_options(values, settings);
  request.options.model_path = model;
  request.options.output_dir = output;
  request.cache = resolve_cache_config(settings);
  request.use = request.cache.disabled ? CacheUse::disabled : CacheUse::enabled;
  return request;
}

CacheRequest cache_request(const std::vector<OptionValue>& values, const GetEnv& getenv) {
  check_names(values, cache_option_names(), "cache");
  Config settings = config::load_given_settings(values, getenv);
  return {resolve_cache_config(settings), settings.warnings};
}

} // namespace npucc
