#include "util/test_point.h"

#include "util/interrupt.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <mutex>
#include <string>
#include <unistd.h>

namespace npucc::util {

namespace {

struct StopRule {
  bool active = false;
  std::string name;   // stop at this point (or prefix, with `prefix`)
  bool prefix = false;
  long ordinal = 0;   // or at the Nth point
  std::string note;
  std::string trace;  // NPUCC_TEST_TRACE: every point's name goes here
};

StopRule read_rule() {
  StopRule rule;
  if (const char* trace = std::getenv("NPUCC_TEST_TRACE"); trace != nullptr && *trace != '\0') {
    rule.active = true;
    rule.trace = trace;
    return rule;
  }
  const char* at = std::getenv("NPUCC_TEST_STOP_AT");
  const char* note = std::getenv("NPUCC_TEST_STOP_NOTE");
  if (at == nullptr || *at == '\0' || note == nullptr || *note == '\0') {
    return rule;
  }
  rule.active = true;
  rule.note = note;
  char* end = nullptr;
  long n = std::strtol(at, &end, 10);
  if (*end == '\0' && n > 0) {
    rule.ordinal = n;
    return rule;
  }
  rule.name = at;
  if (!rule.name.empty() && rule.name.back() == '*') {
    rule.name.pop_back();
    rule.prefix = true;
  }
  return rule;
}

std::mutex g_rule_mutex;
StopRule g_rule; // written once per read, before g_state says it is there

std::atomic<int> g_state{0}; // 0: not read yet, 1: no rule, 2: a rule
std::atomic<long> g_reached{0};
std::atomic<bool> g_stopped{false};

bool matches(const StopRule& stop, const char* name, long ordinal) {
  if (stop.ordinal > 0) {
    return ordinal == stop.ordinal;
  }
  return stop.prefix ? std::strncmp(name, stop.name.c_str(), stop.name.size()) == 0
                     : stop.name == name;
}

// Claims the note (the first process to get here stops; the others go on), says where it
// stopped, and waits for the signal.
void stop_here(const StopRule& stop, const char* name) {
  int fd = ::open(stop.note.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    return;
  }
  std::string line = std::string(name) + " " + std::to_string(::getpid()) + "\n";
  ssize_t ignored = ::write(fd, line.data(), line.size());
  (void)ignored;
  ::close(fd);
  while (!interrupt_pending()) {
    timespec pause{0, 5 * 1000000L};
    ::nanosleep(&pause, nullptr);
  }
}

// One write() per line with O_APPEND: lines of threads and processes do not mix.
void append_line(const std::string& path, const char* name) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return;
  }
  std::string line = std::string(name) + "\n";
  ssize_t ignored = ::write(fd, line.data(), line.size());
  (void)ignored;
  ::close(fd);
}

int read_state() {
  std::lock_guard<std::mutex> lock(g_rule_mutex);
  int state = g_state.load();
  if (state == 0) {
    g_rule = read_rule();
    state = g_rule.active ? 2 : 1;
    g_state.store(state);
  }
  return state;
}

} // namespace

void test_point(const char* name) {
  int state = g_state.load(std::memory_order_acquire);
  if (state == 1) {
    return;
  }
  if (state == 0 && read_state() == 1) {
    return;
  }
  if (!g_rule.trace.empty()) {
    append_line(g_rule.trace, name);
    return;
  }
  long ordinal = ++g_reached;
  if (matches(g_rule, name, ordinal) && !g_stopped.exchange(true)) {
    stop_here(g_rule, name);
  }
}

void reread_test_point_rule() {
  std::lock_guard<std::mutex> lock(g_rule_mutex);
  g_state.store(0);
  g_reached.store(0);
  g_stopped.store(false);
}

} // namespace npucc::util
