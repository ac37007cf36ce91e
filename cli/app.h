#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace npucc::cli {

// Options every command shares.
struct GlobalOptions {
  bool verbose = false;
  bool quiet = false;
  std::string color = "auto";
};

// One subcommand: its name, one-line description, and a function that adds its
// options to `command` and returns the handler to run after parsing. Handlers
// return the exit status; errors are thrown as npucc::Error.
struct Command {
  const char* name;
  const char* description;
  std::function<std::function<int()>(CLI::App& command, const GlobalOptions& global)> setup;
};

// The table of subcommands (app.cpp), in the order `npucc --help` lists them.
const std::vector<Command>& commands();

int run(int argc, char** argv);

// Command setups, one per file (cmd_<name>.cpp).
std::function<int()> setup_compile(CLI::App& command, const GlobalOptions& global);
std::function<int()> setup_inspect(CLI::App& command, const GlobalOptions& global);
std::function<int()> setup_schedule(CLI::App& command, const GlobalOptions& global);
std::function<int()> setup_compare(CLI::App& command, const GlobalOptions& global);
std::function<int()> setup_cache(CLI::App& command, const GlobalOptions& global);
std::function<int()> setup_config(CLI::App& command, const GlobalOptions& global);
std::function<int()> setup_completion(CLI::App& command, const GlobalOptions& global);

} // namespace npucc::cli
