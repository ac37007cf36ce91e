#include "util/interrupt.h"

#include "util/eintr.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <iterator>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace npucc::util {

namespace {

// Fixed tables: the handler may neither allocate nor lock.
constexpr size_t k_max_children = 256;
// Entries are never released (the handler may be reading one), and a long-lived process
// (the Python module, a unit test run) registers a folder per output folder and per TMPDIR:
// room for many, since a folder left out would keep its files after an interrupt.
constexpr size_t k_max_sweeps = 256;
constexpr size_t k_path_max = 4096;
constexpr int k_stop_ms = 1000; // how long children get before SIGKILL

std::atomic<pid_t> g_children[k_max_children];
struct Sweep {
  std::atomic<bool> used{false};
  char dir[k_path_max];
  char prefix[256];
};
Sweep g_sweeps[k_max_sweeps];
std::atomic<size_t> g_done{0};
std::atomic<size_t> g_total{0};

struct LinuxDirent64 {
  ino64_t d_ino;
  off64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1]; // as long as d_reclen says (a flexible array in C)
};

// Decimal digits of n into out (at least 24 bytes); returns the end.
char* put_number(char* out, size_t n) {
  char digits[24];
  int count = 0;
  do {
    digits[count++] = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n > 0);
  while (count > 0) {
    *out++ = digits[--count];
  }
  *out = '\0';
  return out;
}

bool starts_with(const char* text, const char* prefix) {
  return std::strncmp(text, prefix, std::strlen(prefix)) == 0;
}

// Whether `name` holds ".PID." for this process or a watched child.
bool staged_by_us(const char* name) {
  auto holds = [&](pid_t pid) {
    char needle[32] = ".";
    char* end = put_number(needle + 1, static_cast<size_t>(pid));
    end[0] = '.';
    end[1] = '\0';
    return std::strstr(name, needle) != nullptr;
  };
  if (holds(::getpid())) {
    return true;
  }
  for (auto& child : g_children) {
    pid_t pid = child.load();
    if (pid > 0 && holds(pid)) {
      return true;
    }
  }
  return false;
}

// Calls visit(name, type) for each entry of the open folder `fd`.
template <typename Visit> void each_entry(int fd, Visit visit) {
  alignas(LinuxDirent64) char buffer[8192];
  for (;;) {
    long n = ::syscall(SYS_getdents64, fd, buffer, sizeof buffer);
    if (n <= 0) {
      return;
    }
    for (long offset = 0; offset < n;) {
      auto* entry = reinterpret_cast<LinuxDirent64*>(buffer + offset);
      offset += entry->d_reclen;
      if (std::strcmp(entry->d_name, ".") != 0 && std::strcmp(entry->d_name, "..") != 0) {
        visit(entry->d_name, entry->d_type);
      }
    }
  }
}

// Removes `name` in `dir_fd`: a file, or a folder of files (never deeper). Another thread
// may still be writing into the folder (a compile's graph writers run until _exit), so the
// folder is emptied again until rmdir() succeeds: once it is gone, nothing more can be
// created in it.
void remove_staged(int dir_fd, const char* name) {
  if (::unlinkat(dir_fd, name, 0) == 0) {
    return;
  }
  int fd = ::openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    return;
  }
  for (int round = 0; round < 100; ++round) {
    each_entry(fd, [&](const char* child, unsigned char) { ::unlinkat(fd, child, 0); });
    ::lseek(fd, 0, SEEK_SET); // read the folder again from its start
    if (::unlinkat(dir_fd, name, AT_REMOVEDIR) == 0 || errno != ENOTEMPTY) {
      break;
    }
  }
  ::close(fd);
}

// Removes the staged names of one registered folder, a batch at a time (names first,
// removal after: removing while reading would skip entries).
void sweep_folder(const Sweep& sweep) {
  int fd = ::open(sweep.dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    return;
  }
  for (int batch = 0; batch < 64; ++batch) {
    char names[16][256];
    size_t count = 0;
    ::lseek(fd, 0, SEEK_SET);
    each_entry(fd, [&](const char* name, unsigned char) {
      if (count < 16 && starts_with(name, sweep.prefix) && staged_by_us(name) &&
          std::strlen(name) < sizeof names[0]) {
        std::strcpy(names[count++], name);
      }
    });
    for (size_t i = 0; i < count; ++i) {
      remove_staged(fd, names[i]);
    }
    if (count < 16) {
      break;
    }
  }
  ::close(fd);
}

void sweep_folders() {
  for (auto& sweep : g_sweeps) {
    if (sweep.used.load()) {
      sweep_folder(sweep);
    }
  }
}

void sleep_ms(long ms) {
  timespec pause{0, ms * 1000000L};
  ::nanosleep(&pause, nullptr);
}

// SIGTERM to every child, SIGKILL to those still there after k_stop_ms; each is reaped.
// The table keeps their pids: the sweep after looks for their staging folders.
void stop_children() {
  bool reaped[k_max_children] = {};
  for (auto& child : g_children) {
    pid_t pid = child.load();
    if (pid > 0) {
      ::kill(pid, SIGTERM);
    }
  }
  for (int waited = 0;; waited += 10) {
    bool last_round = waited >= k_stop_ms;
    bool left = false;
    for (size_t i = 0; i < k_max_children; ++i) {
      pid_t pid = g_children[i].load();
      if (pid <= 0 || reaped[i]) {
        continue;
      }
      if (last_round) {
        ::kill(pid, SIGKILL);
      }
      pid_t got = retry_on_eintr([&] { return ::waitpid(pid, nullptr, last_round ? 0 : WNOHANG); });
      reaped[i] = got != 0; // reaped, or not ours to wait for
      left = left || !reaped[i];
    }
    if (!left) {
      return;
    }
    sleep_ms(10);
  }
}

void say_interrupted() {
  char line[128] = "npucc: interrupted: ";
  char* end = put_number(line + std::strlen(line), g_done.load());
  std::strcpy(end, " of ");
  end = put_number(end + 4, g_total.load());
  std::strcpy(end, " compiled\n");
  ssize_t ignored = ::write(2, line, std::strlen(line));
  (void)ignored;
}

std::atomic<bool> g_says{true};   // false in a forked child: its parent prints the line
std::atomic<int> g_deferring{0}; // DeferInterrupts alive, in every thread
std::atomic<int> g_pending{0};   // the first signal that arrived, 0 for none
std::atomic<bool> g_acting{false};

constexpr int k_interrupts[] = {SIGINT, SIGTERM, SIGHUP};

// Holds the three in the calling thread (pthread_sigmask, async-signal-safe on Linux): a
// later one goes to another thread, or waits until _exit.
void hold_interrupts_here() {
  sigset_t held;
  sigemptyset(&held);
  for (int signal : k_interrupts) {
    sigaddset(&held, signal);
  }
  ::pthread_sigmask(SIG_BLOCK, &held, nullptr);
}

// Until another thread's _exit: the process is ending, in the acting thread's hands.
[[noreturn]] void wait_for_the_end() {
  hold_interrupts_here();
  for (;;) {
    ::pause();
  }
}

// The deferred steps other threads have begun (a fork, a publish, a private folder) end
// before the children are stopped and the folders swept; at most k_stop_ms, since such a
// thread could be waiting for a lock the interrupted one holds.
void let_deferrals_end() {
  for (int waited = 0; g_deferring.load() > 0 && waited < k_stop_ms; ++waited) {
    sleep_ms(1);
  }
}

// Stops the children, sweeps the staging folders and exits; in one thread only (a signal
// may reach two threads, or a thread and the end of a DeferInterrupts).
[[noreturn]] void act_on(int signal) {
  hold_interrupts_here();
  if (g_acting.exchange(true)) {
    wait_for_the_end();
  }
  let_deferrals_end();
  stop_children();
  sweep_folders();
  if (g_says.load()) {
    say_interrupted(); // the command's own line; its workers stay quiet
  }
  ::_exit(128 + signal);
}

void on_signal(int signal) {
  // Noted first, the deferral read after: ~DeferInterrupts does the two the other way
  // round, so one of them sees the other (both may: act_on picks one).
  int none = 0;
  g_pending.compare_exchange_strong(none, signal); // the first one sets the exit status
  if (g_deferring.load() > 0) {
    return;
  }
  act_on(g_pending.load());
}

} // namespace

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  for (int signal : k_interrupts) {
    sigaddset(&action.sa_mask, signal); // held in the handling thread: act_on holds them on
  }
  // SIGINT last: once it is caught, so are the others (an observer that sees SIGINT's
  // handler in /proc, as tests/e2e/interrupt_anytime.py does, may signal any of the three).
  for (size_t i = std::size(k_interrupts); i-- > 0;) {
    ::sigaction(k_interrupts[i], &action, nullptr);
  }
}

void watch_child(pid_t pid) {
  for (auto& child : g_children) {
    pid_t expected = 0;
    if (child.compare_exchange_strong(expected, pid)) {
      return;
    }
  }
}

void forget_child(pid_t pid) {
  for (auto& child : g_children) {
    pid_t expected = pid;
    if (child.compare_exchange_strong(expected, 0)) {
      return;
    }
  }
}

void sweep_on_interrupt(const std::filesystem::path& dir, const std::string& prefix) {
  std::string text = dir.string();
  if (text.size() >= k_path_max || prefix.size() >= sizeof g_sweeps[0].prefix) {
    return;
  }
  for (auto& sweep : g_sweeps) {
    if (sweep.used.load() && text == sweep.dir && prefix == sweep.prefix) {
      return;
    }
  }
  for (auto& sweep : g_sweeps) {
    if (!sweep.used.load()) {
      std::strcpy(sweep.dir, text.c_str());
      std::strcpy(sweep.prefix, prefix.c_str());
      sweep.used.store(true); // after the copy: the handler reads only a whole entry
      return;
    }
  }
}

void set_interrupt_progress(size_t done, size_t total) {
  g_done.store(done);
  g_total.store(total);
}

void count_interrupt_progress() { g_done.fetch_add(1); }

void forget_children_after_fork() {
  for (auto& child : g_children) {
    child.store(0);
  }
  g_deferring.store(0);
  g_pending.store(0);
  g_acting.store(false);
  g_says.store(false);
}

void become_quiet_child() {
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  ::signal(SIGTERM, SIG_DFL);
  ::signal(SIGTTOU, SIG_IGN);
  ::setpgid(0, 0);
}

void await_pending_interrupt() {
  if (g_pending.load() != 0) {
    wait_for_the_end();
  }
}

void settle_interrupts_before_exit() {
  hold_interrupts_here();
  if (g_acting.exchange(true)) {
    wait_for_the_end();
  }
}

DeferInterrupts::DeferInterrupts() {
  g_deferring.fetch_add(1);
  if (g_acting.load()) {
    // The process is ending: nothing more begins (no fork, no folder) that the handler,
    // which may be past its stop and sweep, would miss.
    g_deferring.fetch_sub(1);
    wait_for_the_end();
  }
}

DeferInterrupts::~DeferInterrupts() {
  if (g_deferring.fetch_sub(1) == 1) {
    int signal = g_pending.load();
    if (signal != 0) {
      act_on(signal);
    }
  }
}

bool interrupt_pending() { return g_pending.load() != 0; }

} // namespace npucc::util
