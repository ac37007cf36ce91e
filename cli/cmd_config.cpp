// `npucc config show [--json]`, `npucc config path`: the effective settings and where each
// comes from (npucc/config.h), so "why is it using that cache folder?" has an answer.
#include "app.h"
#include "config/option_table.h"
#include "config_options.h"
#include "json_document.h"
#include "terminal.h"
#include "util/strings.h"
#include "util/text_table.h"

#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace npucc::cli {

void add_options_file_option(CLI::App& command, ConfigArgs& args) {
  command.add_option(
      "--options", args.options_file,
      "JSON file of Ascend options (graph_compiler_cache_dir, accelerate_train_mode, "
      "precision_mode, precision_mode_v2, modify_mixlist)");
}

CLI::Option* note_empty_value(CLI::Option* option, std::set<std::string>& empty_settings,
                              const std::string& key) {
  option->each([&empty_settings, key](const std::string& value) {
    if (util::trim(value).empty()) {
      empty_settings.insert(key);
    }
  });
  return option;
}

void add_setting_options(CLI::App& command, ConfigArgs& args,
                         const std::vector<std::string>& keys) {
  for (const auto& row : config::option_table()) {
    const SettingInfo& info = row.setting;
    if (!config::is_setting(row) || row.group == config::OptionGroup::global ||
        (!keys.empty() && std::find(keys.begin(), keys.end(), info.key) == keys.end())) {
      continue; // not a setting, or a global option already (--color)
    }
    std::string names = info.option + (row.alias.empty() ? "" : ",--" + row.alias);
    if (info.kind == SettingKind::boolean) {
      std::string key = info.key;
      command.add_flag_callback(
          names, [&args, key] { args.values[key] = "true"; }, info.description);
    } else {
      note_empty_value(command.add_option(names, args.values[info.key], info.description),
                       args.empty_settings, info.key);
    }
  }
}

Config load_command_config(const GlobalOptions& global, const ConfigArgs& args,
                           const std::vector<CommandLineValue>& extra) {
  ConfigSources sources;
  sources.options_file = args.options_file;
  for (const auto& [key, value] : args.values) {
    sources.command_line.push_back(
        {key, value, setting_info(key).option, args.empty_settings.count(key) > 0});
  }
  sources.command_line.insert(sources.command_line.end(), extra.begin(), extra.end());
  if (global.color != "auto") {
    sources.command_line.push_back({"color", global.color, "--color"});
  }
  Config config = load_config(sources);
  if (!global.quiet) {
    bool color = use_color(global, STDERR_FILENO);
    for (const auto& warning : config.warnings) {
      std::cerr << paint("npucc: warning:", "35", color) << " " << util::printable(warning) << "\n";
    }
  }
  return config;
}

namespace {

void print_table(const Config& config) {
  util::TextTable table("", "");
  std::cout << "config file: " << util::printable(config.config_file.string())
            << (config.config_file_found ? "" : " (not found)") << "\n";
  for (const auto& info : settings_table()) {
    const Setting& setting = config.get(info.key);
    std::string value = setting.is_set() ? setting.value : "(unset)";
    if (info.key == "cache.max_size" && !config.cache_max_size()) {
      value = "unbounded";
    }
    table.add_row({info.key, value + "  [" + setting.describe_source() + "]"});
  }
  std::cout << table.render();
}

// A setting's value as its JSON type: booleans and seconds as what they are, sizes as
// written ("2G", with "bytes" beside), the rest as text; null when unset. Values were
// validated when read (config/value.cpp), so the conversions cannot fail.
nlohmann::json typed_value(const SettingInfo& info, const Setting& setting) {
  if (!setting.is_set()) {
    return nullptr;
  }
  switch (info.kind) {
  case SettingKind::boolean:
    return setting.value == "true";
  case SettingKind::seconds:
    return std::strtod(setting.value.c_str(), nullptr);
  default:
    return setting.value;
  }
}

nlohmann::json to_json(const Config& config) {
  nlohmann::json settings = nlohmann::json::object();
  for (const auto& info : settings_table()) {
    const Setting& setting = config.get(info.key);
    nlohmann::json item = {{"value", typed_value(info, setting)},
                           {"source", setting_source_name(setting.source)},
                           {"origin", setting.origin},
                           {"environment", info.environment},
                           {"option", info.option},
                           {"ascend_key", info.ascend_key.empty()
                                              ? nlohmann::json()
                                              : nlohmann::json(info.ascend_key)}};
    if (info.key == "cache.max_size") {
      auto bytes = config.cache_max_size();
      item["bytes"] = bytes ? nlohmann::json(*bytes) : nlohmann::json();
    }
    settings[info.key] = item;
  }
  return json_document(k_config_show_format,
                       nlohmann::json{{"config_file", config.config_file.string()},
                                      {"config_file_found", config.config_file_found},
                                      {"settings", settings},
                                      {"warnings", config.warnings}});
}

} // namespace

std::function<int()> setup_config(CLI::App& command, const GlobalOptions& global) {
  struct Args {
    ConfigArgs config;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  auto chosen = std::make_shared<std::function<int()>>();
  command.require_subcommand(1);

  CLI::App* show =
      command.add_subcommand("show", "print the effective settings and where each comes from");
  show->add_flag("--json", args->json, "print JSON");
  add_options_file_option(*show, args->config);
  add_setting_options(*show, args->config);
  show->callback([chosen, args, &global] {
    *chosen = [args, &global] {
      Config config = load_command_config(global, args->config);
      if (args->json) {
        std::cout << to_json(config).dump(2) << "\n";
      } else {
        print_table(config);
      }
      return 0;
    };
  });

  CLI::App* path =
      command.add_subcommand("path", "print the config file's path (whether or not it exists)");
  path->callback([chosen] {
    *chosen = [] {
      std::cout << config_file_path(process_getenv).string() << "\n";
      return 0;
    };
  });
  return [chosen] { return *chosen ? (*chosen)() : 0; };
}

} // namespace npucc::cli
