#include "compile_options.h"

#include "config/compile_request.h"
#include "util/strings.h"

#include <algorithm>
#include <iostream>

namespace npucc::cli {

namespace {

using config::OptionArity;
using config::OptionGroup;
using config::OptionRow;

// One row as CLI11 options that append what is given to `values`: CLI11 still checks
// the shape (a number for --target-opset), the request builder the meaning.
void add_row(CLI::App& command, OptionValues& values, const OptionRow& row) {
  std::string names = config::option_spelling(row) + (row.alias.empty() ? "" : ",--" + row.alias);
  auto give = [&values, name = row.name](std::string text, bool empty) {
    values.push_back({name, std::move(text), empty});
  };
  switch (row.arity) {
  case OptionArity::text:
    if (!row.list_separator.empty()) {
      // A list in one string (--input-shape): given twice, one input each, the values join
      // as one list ("x:1,3;h:2,1"), as in a --models array.
      command
          .add_option_function<std::vector<std::string>>(
              names,
              [give, separator = row.list_separator](const std::vector<std::string>& texts) {
                std::string text = util::join(texts, separator);
                give(text, util::trim(text).empty());
              },
              row.help)
          ->allow_extra_args(false);
      break;
    }
    // '' is not "not given" but "the default", over NPUCC_* variables and config files.
    command.add_option_function<std::string>(
        names, [give](const std::string& text) { give(text, util::trim(text).empty()); }, row.help);
    break;
  case OptionArity::integer:
    command.add_option_function<int64_t>(
        names, [give](const int64_t& number) { give(std::to_string(number), false); }, row.help);
    break;
  case OptionArity::flag:
    command.add_flag_callback(
        names, [give] { give("true", false); }, row.help);
    break;
  case OptionArity::repeated:
    command.add_option_function<std::vector<std::string>>(
        names,
        [give](const std::vector<std::string>& texts) {
          for (const auto& text : texts) {
            give(text, false);
          }
        },
        row.help);
    break;
  case OptionArity::negatable_flag:
    command.add_flag_function(
        names + ",!--no-" + row.name,
        [give](int64_t count) { give(count < 0 ? "false" : "true", false); }, row.help);
    break;
  }
}

} // namespace

void add_table_options(CLI::App& command, OptionValues& values,
                       std::initializer_list<OptionGroup> groups) {
  for (const auto& row : config::option_table()) {
    if (std::find(groups.begin(), groups.end(), row.group) == groups.end() ||
        command.get_option_no_throw(config::option_spelling(row)) != nullptr) {
      continue;
    }
    add_row(command, values, row);
  }
}

void add_compile_options(CLI::App& command, OptionValues& values) {
  add_table_options(command, values, {OptionGroup::compile, OptionGroup::options_file});
}

void add_cache_options(CLI::App& command, OptionValues& values) {
  add_table_options(command, values, {OptionGroup::cache, OptionGroup::options_file});
}

void add_compile_command_options(CLI::App& command, CompileCommandArgs& args,
                                 CompileCommand which) {
  bool explain = which == CompileCommand::explain;
  command
      .add_option("MODEL", args.model,
                  explain ? "the .onnx model the compile reads" : "the .onnx model to compile")
      ->required();
  CLI::Option* output =
      command.add_option("-o,--output", args.output,
                         explain ? "the compile's output folder (explain writes nothing there)"
                                 : "folder to write the graph(s) and manifest.json to");
  if (!explain) {
    output->required();
  }
  add_table_options(command, args.options,
                    {OptionGroup::compile, OptionGroup::options_file, OptionGroup::cache,
                     OptionGroup::max_size, OptionGroup::link_mode, OptionGroup::digest_cache,
                     OptionGroup::remote, OptionGroup::no_cache});
  command.add_flag("--json", args.json,
                   explain ? "print the explanation as JSON (format npucc-cache-explain)"
                           : "print the manifest as JSON instead of a summary");
  add_table_options(command, args.options, {OptionGroup::output});
  // Not a compile option (the graphs do not depend on it, the cache key leaves it out): a
  // picture drawn from the output once it is written. Explain takes it so that a compile's
  // command line explains itself.
  command
      .add_option("--accuracy-plot", args.accuracy_plot,
                  explain ? "accepted as compile takes it; explain draws nothing"
                          : "draw the compile's drift report as an SVG picture to this file "
                            "(implies --accuracy-report nodes, and so --check-accuracy; "
                            "npucc-inspect(1), DRIFT PICTURE)")
      ->type_name("FILE.svg");
}

CompileRequest make_compile_request(const CompileCommandArgs& args) {
  OptionValues given = args.options;
  // A picture asked for is made: --accuracy-plot implies --accuracy-report nodes (and so the
  // check), as --accuracy-report implies --check-accuracy. Put first, so that an
  // --accuracy-report the command line gives itself is the one read (a later one wins). The
  // report is keyed (it is part of the output), so explain computes the compile's key.
  if (!args.accuracy_plot.empty()) {
    given.insert(given.begin(), OptionValue{"accuracy-report", "nodes", false});
  }
  CompileRequest request = compile_request(args.model, args.output, given);
  for (const auto& warning : request.warnings) {
    std::cerr << "npucc: warning: " << warning << "\n";
  }
  return request;
}

Config load_settings(const OptionValues& values) {
  Config config = config::load_given_settings(values);
  for (const auto& warning : config.warnings) {
    std::cerr << "npucc: warning: " << warning << "\n";
  }
  return config;
}

CacheConfig make_cache_config(const OptionValues& values) {
  return resolve_cache_config(load_settings(values));
}

} // namespace npucc::cli
