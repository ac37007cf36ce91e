#include "app.h"
#include "help_format.h"
#include "terminal.h"

#include "compiler/build_report.h"
#include "npucc/error.h"
#include "util/interrupt.h"
#include "util/strings.h"

#include <algorithm>
#include <iostream>
#include <optional>
#include <unistd.h>

namespace npucc::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"compile", "compile an ONNX model into optimised graph(s) and a manifest", setup_compile},
      {"inspect", "show what is inside an ONNX model", setup_inspect},
      {"schedule", "which graph (low or high precision) training runs now", setup_schedule},
      {"compare", "measure a model against a reference, float16/bfloat16 emulated", setup_compare},
      {"cache", "manage the compile cache", setup_cache}, // add_commands appends ": ls, ..."
      {"config", "the effective settings and where each comes from", setup_config},
      {"completion", "print a bash or zsh completion script", setup_completion},
  };
  return table;
}

namespace {

// The parsed global options, for print_error's colour (set once run() has them).
const GlobalOptions* g_global = nullptr;

// Names in messages come from models; a hostile one must not break the error into
// several lines or send escape sequences to the terminal (error_line escapes them).
void print_error(const std::string& message, const std::string& hint) {
  // An error while a signal is being acted on is the interrupt's doing (its children
  // stopped, its folders swept): the handler's "interrupted" line is the one to print.
  util::await_pending_interrupt();
  bool color = use_color(g_global != nullptr ? *g_global : GlobalOptions{}, STDERR_FILENO);
  std::cerr << paint("npucc: error:", "1;31", color) << " " << error_line(message, hint) << "\n";
}

// The long options valid at `app`: its own and its parents'.
std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* level = &app; level != nullptr; level = level->get_parent()) {
    for (const auto* option : level->get_options()) {
      for (const auto& name : option->get_lnames()) {
        names.push_back("--" + name);
      }
    }
  }
  return names;
}

const CLI::App* deepest_parsed(const CLI::App& app) {
  for (const auto* sub : app.get_subcommands()) {
    return deepest_parsed(*sub);
  }
  return &app;
}

// "npucc cache ls": the words that name the command the user ran.
std::string command_path(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* level = &app; level != nullptr; level = level->get_parent()) {
    names.insert(names.begin(), level->get_name());
  }
  return util::join(names, " ");
}

std::string see_help(const CLI::App& app) {
  return "see `" + command_path(app) + " --help`";
}

// The first word no level of the command line took that looks like an option
// ("--sortt" of `--sortt model`, "--acelerate-train-mode=x"), without its "=value".
std::optional<std::string> unknown_option(const CLI::App& app) {
  for (const auto& word : app.remaining(true)) {
    if (word.size() > 1 && word[0] == '-') {
      return word.substr(0, word.find('='));
    }
  }
  return std::nullopt;
}

// A mistyped option, named with the full command and the nearest real option. CLI11
// reports it as an "extra" argument, or, when the misspelt option was a required one,
// as that option missing; either way the user typed an option that does not exist.
void print_unknown_option(const CLI::App& command, const std::string& word) {
  std::string match = util::closest_match(word, option_names(command));
  print_error("unknown option " + word + " for `" + command_path(command) + "`",
              match.empty() ? see_help(command) : "did you mean " + match + "?");
}

} // namespace

namespace {

// Adds every subcommand of the table; the one the command line picks stores its handler
// in `handler`. Returns the names, for suggestions.
std::vector<std::string> add_commands(CLI::App& app, const GlobalOptions& global,
                                      std::function<int()>& handler) {
  std::vector<std::string> names;
  for (const auto& command : commands()) {
    CLI::App* sub = app.add_subcommand(command.name, command.description);
    names.emplace_back(command.name);
    auto setup = command.setup;
    auto made = std::make_shared<std::function<int()>>();
    *made = setup(*sub, global);
    sub->callback([made, &handler] { handler = *made; });
    // A command with subcommands names them all in its summary, from the subcommands
    // themselves: a new one cannot be left out of the list.
    std::vector<std::string> nested;
    for (const auto* nested_command : sub->get_subcommands({})) {
      nested.push_back(nested_command->get_name());
    }
    if (!nested.empty()) {
      sub->description(std::string(command.description) + ": " + util::join(nested, ", "));
    }
  }
  return names;
}

// The names of `command`'s own subcommands and their aliases (empty for most commands).
std::vector<std::string> nested_names(const CLI::App& command) {
  std::vector<std::string> nested;
  for (const auto* sub : command.get_subcommands({})) {
    nested.push_back(sub->get_name());
    for (const auto& alias : sub->get_aliases()) {
      nested.push_back(alias);
    }
  }
  return nested;
}

// A mistyped subcommand gets a suggestion, not CLI11's generic complaint. Returns false
// once it has printed the error.
bool check_command_words(CLI::App& app, const std::vector<std::string>& names, int argc,
                         char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string word = argv[i];
    if (word.empty() || word[0] == '-') {
      if (word == "--color") {
        ++i;
      }
      continue;
    }
    if (std::find(names.begin(), names.end(), word) == names.end()) {
      std::string match = util::closest_match(word, names);
      print_error("unknown command \"" + word + "\"",
                  match.empty() ? "commands: " + util::join(names, ", ")
                                : "did you mean \"" + match + "\"?");
      return false;
    }
    // A command with subcommands of its own (cache): the next word must name one.
    std::vector<std::string> nested = nested_names(*app.get_subcommand(word));
    if (!nested.empty() && i + 1 < argc && argv[i + 1][0] != '-' &&
        std::find(nested.begin(), nested.end(), argv[i + 1]) == nested.end()) {
      std::string match = util::closest_match(argv[i + 1], nested);
      print_error("unknown " + word + " command \"" + argv[i + 1] + "\"",
                  match.empty() ? "commands: " + util::join(nested, ", ")
                                : "did you mean \"" + match + "\"?");
      return false;
    }
    return true;
  }
  return true;
}

// Parses the command line; a parse error is printed and its exit status returned.
std::optional<int> parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const CLI::App& command = *deepest_parsed(app);
    const std::vector<std::string> extras = app.remaining(true);
    if (auto word = unknown_option(app)) {
      print_unknown_option(command, *word);
    } else if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && !extras.empty()) {
      print_error("unexpected argument \"" + extras.front() + "\" for `" +
                      command_path(command) + "`",
                  see_help(command));
    } else if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr &&
               std::string(e.what()).find("--output") != std::string::npos) {
      // CLI11 says only "--output is required": say what it is for.
      print_error("`" + command_path(command) + "` needs -o OUTDIR, the folder that gets the " +
                      "graphs and manifest.json",
                  see_help(command));
    } else {
      print_error(util::first_line(e.what()), see_help(command));
    }
    return static_cast<int>(ExitStatus::usage);
  } catch (const Error& e) {
    print_error(e.what(), e.hint());
    return static_cast<int>(e.status());
  }
  return std::nullopt;
}

// Runs the chosen command; every error becomes one line and an exit status.
int run_handler(const std::function<int()>& handler) {
  try {
    return handler ? handler() : 0;
  } catch (const Error& e) {
    print_error(e.what(), e.hint());
    return static_cast<int>(e.status());
  } catch (const std::bad_alloc&) {
    print_error("out of memory", "the model may be too large for this machine");
    return static_cast<int>(ExitStatus::error);
  } catch (const std::exception& e) {
    print_error(std::string("internal error: ") + util::first_line(e.what()), "please report this");
    return static_cast<int>(ExitStatus::error);
  }
}

// `npucc --version [--json]`, alone on the line: the version line, or the same as a JSON
// document (compiler/build_report.h). Answered before parsing, since CLI11's version flag
// knows no --json; --version elsewhere (`npucc -q --version`) gets the line through CLI11.
std::optional<int> answer_version(int argc, char** argv) {
  std::vector<std::string> words(argv + 1, argv + argc);
  std::sort(words.begin(), words.end());
  if (words == std::vector<std::string>{"--version"}) {
    std::cout << compiler::version_line() << "\n";
    return 0;
  }
  if (words == std::vector<std::string>{"--json", "--version"}) {
    std::cout << compiler::version_json() << "\n";
    return 0;
  }
  return std::nullopt;
}

} // namespace

int run(int argc, char** argv) {
  if (auto status = answer_version(argc, argv)) {
    return *status;
  }
  CLI::App app{"npucc: offline compiler and compile-cache manager for ONNX neural-network graphs"};
  app.name("npucc");
  app.set_version_flag("--version", compiler::version_line,
                       "print npucc's version, commit and build, and the ONNX, protobuf and "
                       "ONNX Runtime it uses, in one line (--version --json: as JSON)");
  app.formatter(std::make_shared<HelpFormatter>());
  app.require_subcommand(1);
  app.fallthrough();
  GlobalOptions global;
  g_global = &global;
  app.add_flag("-v,--verbose", global.verbose, "print what each step does");
  app.add_flag("-q,--quiet", global.quiet, "print nothing but errors and requested output");
  app.add_option("--color", global.color, "colour output: never, auto or always")
      ->check(CLI::IsMember({"never", "auto", "always"}))
      ->capture_default_str();

  std::function<int()> handler;
  std::vector<std::string> names = add_commands(app, global, handler);
  if (!check_command_words(app, names, argc, argv)) {
    return static_cast<int>(ExitStatus::usage);
  }
  if (auto status = parse(app, argc, argv)) {
    return *status;
  }
  return run_handler(handler);
}

} // namespace npucc::cli
