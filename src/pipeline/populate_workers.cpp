#include "pipeline/populate_workers.h"

#include "check/isolated_worker.h"
#include "npucc/error.h"
#include "util/eintr.h"
#include "util/interrupt.h"
#include "util/parallel.h"
#include "util/sha256.h"
#include "util/socket_channel.h"
#include "util/test_point.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace npucc::pipeline {

namespace {

constexpr size_t k_task_fields = 2;  // index, remote state
constexpr size_t k_reply_fields = 6; // index, failed, outcome, detail, remote warning, remote

struct Worker {
  pid_t pid = -1;
  int fd = -1;                // the parent's end of the worker's socket pair
  std::optional<size_t> task; // the model it is compiling
  std::string buffer;         // reply bytes received so far
};

size_t thread_count() {
  std::error_code ec;
  size_t threads = 0;
  for (std::filesystem::directory_iterator it("/proc/self/task", ec), end; !ec && it != end;
       it.increment(ec)) {
    ++threads;
  }
  return ec ? 0 : threads;
}

// A thread just joined (LocalStorage hashes files on all cores) may stay listed for a
// moment after pthread_join returns, so a second thread is looked at a few times.
bool single_threaded() {
  for (int attempt = 0; attempt < 20; ++attempt) {
    size_t threads = thread_count();
    if (threads <= 1) {
      return threads == 1;
    }
    ::usleep(1000);
  }
  return false;
}

std::string encode_reply(size_t index, const WorkerReply& reply) {
  const PopulateItem& item = reply.item;
  return util::encode_fields({std::to_string(index), item.failed ? "1" : "0",
                              std::to_string(static_cast<int>(item.outcome)), item.detail,
                              item.remote_warning, reply.remote == RemoteState::down ? "1" : "0"});
}

WorkerReply decode_reply(const std::vector<std::string>& fields, size_t expected_index) {
  if (fields[0] != std::to_string(expected_index)) {
    throw Error("the reply is for model " + fields[0] + ", not " + std::to_string(expected_index));
  }
  WorkerReply reply;
  reply.item.failed = fields[1] == "1";
  int outcome = fields[2].empty() ? -1 : std::atoi(fields[2].c_str());
  if (outcome < static_cast<int>(CacheOutcome::hit) ||
      outcome > static_cast<int>(CacheOutcome::disabled)) {
    throw Error("the reply has an unknown outcome " + fields[2]);
  }
  reply.item.outcome = static_cast<CacheOutcome>(outcome);
  reply.item.detail = fields[3];
  reply.item.remote_warning = fields[4];
  reply.remote = fields[5] == "1" ? RemoteState::down : RemoteState::up;
  return reply;
}

// The worker's side: one model per task message until the parent closes the socket.
[[noreturn]] void worker_main(int fd, const CompileOne& compile) {
  std::string buffer;
  std::vector<std::string> task;
  for (;;) {
    while (!util::decode_fields(buffer, k_task_fields, task)) {
      if (!util::receive_some(fd, buffer)) {
        check::stop_isolated_worker(); // reaped before _exit(): no zombie left behind
        ::_exit(0);                    // no more models
      }
    }
    size_t index = std::stoul(task[0]);
    WorkerReply reply = compile(index, task[1] == "1" ? RemoteState::down : RemoteState::up);
    if (!util::send_all(fd, encode_reply(index, reply))) {
      check::stop_isolated_worker();
      ::_exit(1);
    }
  }
}

// Forks one worker. `others` are the parent's ends of earlier workers' sockets: the
// child closes them, or a worker would keep another's socket open and it would never
// see the end of its tasks. nullopt when no worker can be started.
std::optional<Worker> start_worker(const CompileOne& compile, const std::vector<Worker>& others) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return std::nullopt;
  }
  // Unflushed output would otherwise be written twice if a worker ever flushed it.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  pid_t parent = ::getpid();
  // Until watch_child(): a Ctrl-C must not find a worker the handler does not know about.
  util::DeferInterrupts forking;
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return std::nullopt;
  }
  if (pid == 0) {
    ::close(fds[0]);
    for (const auto& other : others) {
      if (other.fd >= 0) {
        ::close(other.fd);
      }
    }
    // Dies with the parent (Ctrl-C, SIGTERM, kill -9 of populate); the check after
    // catches a parent that died before the request was made.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) {
      ::_exit(1);
    }
    // Its own children only; the staging folders it shares with the parent.
    util::forget_children_after_fork();
    util::install_interrupt_handlers(); // it says nothing: forget_children_after_fork()
    worker_main(fds[1], compile);
  }
  ::close(fds[1]);
  util::watch_child(pid);
  util::test_point("populate:worker-started");
  Worker worker;
  worker.pid = pid;
  worker.fd = fds[0];
  return worker;
}

int reap(pid_t pid) {
  int status = 0;
  util::retry_on_eintr([&] { return ::waitpid(pid, &status, 0); });
  util::forget_child(pid);
  return status;
}

void stop(Worker& worker) {
  if (worker.fd >= 0) {
    ::close(worker.fd);
    worker.fd = -1;
  }
  if (worker.pid > 0) {
    reap(worker.pid);
    worker.pid = -1;
  }
}

// The parent's side: hands out models one at a time as workers become free.
class Pool {
public:
  Pool(size_t count, const CompileOne& compile, const ItemDone& done)
      : m_count(count), m_compile(compile), m_done(done) {}

  void run(unsigned workers) {
    for (unsigned w = 0; w < workers; ++w) {
      if (auto worker = start_worker(m_compile, m_workers)) {
        m_workers.push_back(std::move(*worker));
      }
    }
    for (auto& worker : m_workers) {
      give_task(worker);
    }
    while (m_finished < m_count && busy() > 0) {
      wait_for_replies();
    }
    for (auto& worker : m_workers) {
      stop(worker);
    }
    // No worker could be started (or restarted): the rest is compiled here.
    for (; m_next < m_count; ++m_next) {
      finish(m_next, m_compile(m_next, m_remote));
    }
  }

private:
  size_t busy() const {
    size_t n = 0;
    for (const auto& worker : m_workers) {
      n += worker.task ? 1 : 0;
    }
    return n;
  }

  void finish(size_t index, const WorkerReply& reply) {
    if (reply.remote == RemoteState::down) {
      m_remote = RemoteState::down;
    }
    ++m_finished;
    m_done(index, reply);
  }

  // Sends the next model, or closes the socket when there is none (the worker exits).
  void give_task(Worker& worker) {
    worker.task.reset();
    if (m_next >= m_count) {
      stop(worker);
      return;
    }
    size_t index = m_next++;
    worker.task = index;
    std::string message =
        util::encode_fields({std::to_string(index), m_remote == RemoteState::down ? "1" : "0"});
    if (!util::send_all(worker.fd, message)) {
      worker_died(worker);
    }
  }

  void wait_for_replies() {
    std::vector<pollfd> fds;
    std::vector<Worker*> owners;
    for (auto& worker : m_workers) {
      if (worker.task) {
        fds.push_back({worker.fd, POLLIN, 0});
        owners.push_back(&worker);
      }
    }
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) {
        return;
      }
      throw Error(std::string("cache populate: waiting for the compile workers: ") +
                  std::strerror(errno));
    }
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents != 0) {
        read_reply(*owners[i]);
      }
    }
  }

  void read_reply(Worker& worker) {
    if (!util::receive_some(worker.fd, worker.buffer)) {
      worker_died(worker);
      return;
    }
    std::vector<std::string> fields;
    std::optional<WorkerReply> reply;
    try {
      if (!util::decode_fields(worker.buffer, k_reply_fields, fields)) {
        return; // more to come
      }
      reply = decode_reply(fields, *worker.task);
    } catch (const Error& e) {
      ::kill(worker.pid, SIGKILL);
      fail(worker, std::string("internal error: a compile worker sent a bad reply: ") + e.what());
      return;
    }
    size_t index = *worker.task;
    worker.task.reset();
    finish(index, *reply);
    give_task(worker);
  }

  // The model it was compiling fails in one line; a fresh worker takes its place.
  void worker_died(Worker& worker) {
    ::close(worker.fd);
    worker.fd = -1;
    int status = reap(worker.pid);
    worker.pid = -1;
    fail(worker, "the compile worker " + util::describe_wait_status(status) +
                     " while compiling it; nothing was stored for it");
  }

  void fail(Worker& worker, const std::string& why) {
    size_t index = *worker.task;
    stop(worker);
    worker.task.reset();
    WorkerReply reply;
    reply.item.failed = true;
    reply.item.detail = why;
    reply.worker_lost = true;
    finish(index, reply);
    if (m_next < m_count) {
      if (auto fresh = start_worker(m_compile, m_workers)) {
        worker = std::move(*fresh);
        give_task(worker);
      }
    }
  }

  size_t m_count;
  const CompileOne& m_compile;
  const ItemDone& m_done;
  std::vector<Worker> m_workers;
  size_t m_next = 0;
  size_t m_finished = 0;
  RemoteState m_remote = RemoteState::up;
};

} // namespace

void compile_in_workers(size_t count, unsigned workers, const CompileOne& compile,
                        const ItemDone& done) {
  unsigned wanted = static_cast<unsigned>(std::min<size_t>(workers, count));
  // -j N is N cores in all: N models at once on one core each, or, with fewer models
  // than N, a share of the spare cores each (workers inherit the budget).
  unsigned budget = std::max(1u, workers / std::max(1u, wanted));
  struct RestoreBudget {
    unsigned previous;
    ~RestoreBudget() { util::set_thread_budget(previous); }
  } restore{util::set_thread_budget(budget)};
  if (wanted <= 1 || !single_threaded()) {
    RemoteState remote = RemoteState::up;
    for (size_t i = 0; i < count; ++i) {
      WorkerReply reply = compile(i, remote);
      if (reply.remote == RemoteState::down) {
        remote = RemoteState::down;
      }
      done(i, reply);
    }
    return;
  }
  // Once here rather than once per worker.
  check::warm_onnx_schemas();
  util::warm_sha256();
  Pool(count, compile, done).run(wanted);
}

} // namespace npucc::pipeline
