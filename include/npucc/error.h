#pragma once

#include <stdexcept>
#include <string>

namespace npucc {

// Exit statuses are part of the interface (documented in npucc(1)).
enum class ExitStatus : int {
  ok = 0,
  error = 1,          // bad input, failed compile, I/O error
  usage = 2,          // bad command line
  verify_failed = 3,  // `cache verify` found problems
  interrupted = 130,
};

// "MESSAGE (HINT)", or MESSAGE alone without a hint, with control characters escaped
// (names in messages come from models): the line the CLI prints after "npucc: error: ".
std::string error_line(const std::string& message, const std::string& hint = {});

// The one error type higher-level code throws. The message is a single line that
// names the file, node or option at fault; `hint`, when set, says what would fix it.
class Error : public std::runtime_error {
public:
  explicit Error(const std::string& message, std::string hint = {},
                 ExitStatus status = ExitStatus::error)
      : std::runtime_error(message), m_hint(std::move(hint)), m_status(status) {}

  const std::string& hint() const { return m_hint; }
  ExitStatus status() const { return m_status; }
  // error_line(what(), hint()): what the CLI prints for this error.
  std::string line() const { return error_line(what(), m_hint); }

private:
  std::string m_hint;
  ExitStatus m_status;
};

// A bad option value: exit status 2.
inline Error usage_error(const std::string& message, std::string hint = {}) {
  return Error(message, std::move(hint), ExitStatus::usage);
}

} // namespace npucc
