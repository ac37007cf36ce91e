#include "help_format.h"

#include "util/strings.h"

#include <vector>

namespace npucc::cli {

std::string HelpFormatter::make_option_name(const CLI::Option* option, bool is_positional) const {
  if (is_positional) {
    return CLI::Formatter::make_option_name(option, is_positional);
  }
  std::vector<std::string> names;
  for (const auto& name : option->get_snames()) {
    names.push_back("-" + name);
  }
  for (const auto& name : option->get_lnames()) {
    names.push_back("--" + name);
  }
  return util::join(names, ",");
}

std::string HelpFormatter::make_usage(const CLI::App* app, std::string name) const {
  for (const auto& alias : app->get_aliases()) {
    name += "|" + alias;
  }
  return CLI::Formatter::make_usage(app, name);
}

} // namespace npucc::cli
