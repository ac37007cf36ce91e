#pragma once

#include "app.h"

#include <string>
#include <string_view>

namespace npucc::cli {

// True when `fd` is a terminal (not a pipe or file) that is not TERM=dumb.
bool is_terminal(int fd);

// Columns of the terminal on `fd`; $COLUMNS or 80 when it cannot be asked.
int terminal_width(int fd);

// Whether to colour what goes to `fd`: --color, then NPUCC_COLOR, NO_COLOR and the config
// file's `color` (npucc config show), then auto = only on a terminal. Never throws: a broken
// config file must not stop an error message from being printed.
bool use_color(const GlobalOptions& global, int fd);

// Wraps `text` in an SGR colour ("31" red, "32" green, "1;31" bold red) when `enabled`.
std::string paint(std::string_view text, const char* sgr, bool enabled);

} // namespace npucc::cli
