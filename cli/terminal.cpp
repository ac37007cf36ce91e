#include "terminal.h"

#include "npucc/config.h"

#include <cstdlib>
#include <string>
#include <sys/ioctl.h>
#include <unistd.h>

namespace npucc::cli {

bool is_terminal(int fd) {
  if (isatty(fd) == 0) {
    return false;
  }
  const char* term = std::getenv("TERM");
  return term == nullptr || std::string(term) != "dumb";
}

int terminal_width(int fd) {
  winsize size{};
  if (ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
    return size.ws_col;
  }
  const char* columns = std::getenv("COLUMNS");
  if (columns != nullptr) {
    int value = std::atoi(columns);
    if (value > 0) {
      return value;
    }
  }
  return 80;
}

bool use_color(const GlobalOptions& global, int fd) {
  std::string mode = global.color;
  if (mode == "auto") {
    // "auto" on the command line is the default too, so the environment and the config
    // file may still decide.
    try {
      mode = load_config(ConfigSources{}).value("color");
    } catch (const std::exception&) {
      mode = "auto";
    }
  }
  if (mode == "always") {
    return true;
  }
  if (mode == "never") {
    return false;
  }
  return is_terminal(fd);
}

std::string paint(std::string_view text, const char* sgr, bool enabled) {
  if (!enabled) {
    return std::string(text);
  }
  return std::string("\033[") + sgr + "m" + std::string(text) + "\033[0m";
}

} // namespace npucc::cli
