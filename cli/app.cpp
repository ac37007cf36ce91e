#include "app.h"
#include "terminal.h"

#include "npucc/error.h"
#include "npucc/version.h"
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
      {"cache", "manage the compile cache: ls, stats, verify, invalidate, purge, populate",
       setup_cache},
      {"config", "show the effective settings and where each comes from", setup_config},
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

// CLI11 reports a mistyped option as an "extra" argument; name the nearest real one.
std::string suggest_for_extras(const CLI::App& app, const std::vector<std::string>& extras) {
  for (const auto& extra : extras) {
    if (!util::starts_with(extra, "--")) {
      continue;
    }
    std::string word = extra.substr(0, extra.find('='));
    std::string match = util::closest_match(word, option_names(app));
    if (!match.empty()) {
      return "did you mean " + match + "?";
    }
  }
  return "see --help";
}

const CLI::App* deepest_parsed(const CLI::App& app) {
  for (const auto* sub : app.get_subcommands()) {
    return deepest_parsed(*sub);
  }
  return &app;
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
  } catch (const CLI::ExtrasError& e) {
    // CLI11 names the extras after the colon: "... not expected: --verbos".
    std::string message = util::first_line(e.what());
    std::vector<std::string> extras;
    size_t colon = message.rfind(": ");
    if (colon != std::string::npos) {
      extras = util::split(message.substr(colon + 2), ' ');
    }
    print_error(message, suggest_for_extras(*deepest_parsed(app), extras));
    return static_cast<int>(ExitStatus::usage);
  } catch (const CLI::ParseError& e) {
    print_error(util::first_line(e.what()), "see npucc " +
                                                std::string(deepest_parsed(app) == &app
                                                                ? ""
                                                                : deepest_parsed(app)->get_name() + " ") +
                                                "--help");
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

} // namespace

int run(int argc, char** argv) {
  CLI::App app{"npucc: offline compiler and compile-cache manager for ONNX neural-network graphs"};
  app.name("npucc");
  app.set_version_flag("--version", std::string("npucc ") + k_version);
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
