#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace npucc::cli {

// CLI11's help, except that an option is shown by its names alone: CLI11 writes a negated
// flag's default after its name ("--keep-io-types,--no-keep-io-types{false}"), which reads
// as part of the option; and a command with an alias names both in its usage line
// ("npucc cache purge|clean"), so `cache clean --help` does not seem to describe another
// command. Set on the top-level app before its subcommands are added (they copy it).
class HelpFormatter : public CLI::Formatter {
public:
  std::string make_option_name(const CLI::Option* option, bool is_positional) const override;
  std::string make_usage(const CLI::App* app, std::string name) const override;
};

} // namespace npucc::cli
