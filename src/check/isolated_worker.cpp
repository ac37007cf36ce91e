#include "check/isolated_worker.h"

#include "check/validate.h"
#include "model/graph_walk.h"
#include "model/weight_store.h"
#include "npucc/error.h"
#include "schemas/registry.h"
#include "util/eintr.h"
#include "util/interrupt.h"
#include "util/socket_channel.h"
#include "util/strings.h"
#include "util/test_point.h"

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <google/protobuf/io/coded_stream.h>
#include <mutex>
#include <onnx/defs/schema.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <string_view>
#include <utility>
#include <vector>

namespace npucc::check {

namespace {

constexpr size_t k_left_behind = 64 * 1024; // raw data this large stays in the parent

// Messages are util::encode_fields lists (util::send_fields): a request is {kind, argument,
// serialised model}, a reply {reply}.

// The model without its large raw data, which stays here (moved out for the
// serialisation and put back). Sparse tensors keep theirs: the checker reads their indices.
std::string serialise_request_model(onnx::ModelProto& model) {
  std::vector<std::pair<onnx::TensorProto*, std::string>> moved;
  model::for_each_tensor(
      *model.mutable_graph(),
      [&](onnx::TensorProto& tensor) {
        if (tensor.raw_data().size() >= k_left_behind) {
          moved.emplace_back(&tensor, std::move(*tensor.mutable_raw_data()));
          model::make_placeholder(tensor);
        }
      },
      model::SparseTensors::skip);
  std::string bytes;
  bool ok = model.SerializeToString(&bytes);
  for (auto& [tensor, raw] : moved) {
    tensor->clear_external_data();
    tensor->clear_data_location();
    *tensor->mutable_raw_data() = std::move(raw);
  }
  if (!ok) {
    throw Error("cannot serialise the model for the ONNX checker");
  }
  return bytes;
}

// A request that failed may leave ONNX's state anything but clean: the worker ends after
// it, and the next request gets a fresh one.
bool ends_worker(IsolatedRequest request, const std::string& reply) {
  return reply.empty() || reply[0] != '0' ||
         (request == IsolatedRequest::check_and_infer && reply.size() > 1 && reply[1] == 'R');
}

// --- the worker process ---

[[noreturn]] void serve(int fd) {
  for (;;) {
    std::vector<std::string> request;
    std::string reply;
    auto kind = IsolatedRequest::check;
    try {
      if (!util::receive_message(fd, 3, request)) {
        ::_exit(0); // the parent is gone or done
      }
      if (request[0].size() != 1) {
        throw Error("the request did not arrive intact");
      }
      kind = static_cast<IsolatedRequest>(request[0][0]);
      google::protobuf::io::CodedInputStream stream(
          reinterpret_cast<const uint8_t*>(request[2].data()), static_cast<int>(request[2].size()));
      stream.SetRecursionLimit(1024);
      onnx::ModelProto model;
      if (!model.ParseFromCodedStream(&stream)) {
        throw Error("the model did not arrive intact");
      }
      request[2].clear();
      request[2].shrink_to_fit();
      reply = "0" + answer_isolated(kind, request[1], model);
    } catch (const std::exception& e) {
      reply = "1" + util::first_line(e.what());
    }
    if (!util::send_fields(fd, {reply}) || ends_worker(kind, reply)) {
      ::_exit(0);
    }
  }
}

struct Worker {
  pid_t pid = -1;
  int fd = -1;
  pid_t owner = 0; // the process that forked it (a forked copy of this one has none)
};

std::mutex g_mutex;
Worker g_worker;

// Waits for the worker to end; its exit status.
int reap(Worker& worker) {
  int status = 0;
  if (worker.fd >= 0) {
    ::close(worker.fd);
  }
  if (worker.pid > 0) {
    util::retry_on_eintr([&] { return ::waitpid(worker.pid, &status, 0); });
    util::forget_child(worker.pid);
  }
  worker = Worker{};
  return status;
}

void ensure_worker() {
  if (g_worker.owner != 0 && g_worker.owner != ::getpid()) {
    // Inherited through fork() from the process that owns it: not ours to use or reap.
    ::close(g_worker.fd);
    g_worker = Worker{};
  }
  if (g_worker.pid > 0) {
    return;
  }
  warm_onnx_schemas();
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    throw Error(std::string("ONNX checker: cannot create a socket: ") + std::strerror(errno));
  }
  pid_t parent = ::getpid();
  // Linux sends the parent-death signal when the *thread* that forked exits, not the process.
  const bool from_main_thread = ::gettid() == parent;
  // Until watch_child(): a Ctrl-C must not find a child the handler does not know about.
  util::DeferInterrupts forking;
  pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(std::string("ONNX checker: cannot fork: ") + std::strerror(errno));
  }
  if (child == 0) {
    ::close(fds[0]);
    // A crash here is expected and reported by the parent in one line: the handlers
    // inherited from the host (doctest's, a sanitizer's) would print a crash report.
    for (int fatal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
      ::signal(fatal, SIG_DFL);
    }
    // A signal to the process group (Ctrl-C, `timeout`, a CI cancel) does not reach it:
    // the worker's parent ends and reaps it (util/interrupt.h) rather than find it gone
    // mid-request. SIGTERM ends it at once.
    util::become_quiet_child();
    // A compile killed mid-inference (a populate worker, Ctrl-C) takes the worker along
    // instead of leaving it to finish alone. Only when the main thread forked it: a worker
    // forked by another thread of a host (a Python thread compiling) would be killed when
    // that thread ends, in the middle of another thread's request; it ends when the host
    // closes its socket instead, after the request in hand.
    if (from_main_thread) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    }
    if (::getppid() != parent) {
      ::_exit(3);
    }
    // The worker outlives the request that forked it: it keeps none of the host's other
    // descriptors (a copy would hold a flock or a pipe's end open).
    int fd = fds[1];
    if (fd != 3) {
      ::dup2(fd, 3);
      fd = 3;
    }
    ::close_range(4, ~0U, 0);
    serve(fd);
  }
  ::close(fds[1]);
  g_worker = Worker{child, fds[0], parent};
  util::watch_child(child);
  util::test_point("onnx-worker:started");
  // A program embedding the library that returns from main waits for its worker too
  // (npucc itself stops it before its _exit()).
  static const bool k_stopped_at_exit = std::atexit(stop_isolated_worker) == 0;
  (void)k_stopped_at_exit;
}

} // namespace

void warm_onnx_schemas() {
  // ONNX builds its schema registry lazily, inside a function-local static. If another
  // thread of a host program is building it when this one forks, the worker inherits
  // the held initialisation guard and waits for it forever. Built before any fork, the
  // worker finds it ready. (cache populate -j N compiles in worker processes, each
  // single-threaded, for this reason among others: pipeline/populate_workers.h.)
  // Schema() builds the whole registry (map()); Instance() is the other function-local
  // static the worker uses.
  static const bool k_registry_ready = onnx::OpSchemaRegistry::Schema("Relu", 14, "") != nullptr &&
                                       onnx::OpSchemaRegistry::Instance() != nullptr &&
                                       schemas::find_schema("Relu", 14, "") != nullptr;
  (void)k_registry_ready;
}

void stop_isolated_worker() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_worker.pid > 0 && g_worker.owner == ::getpid()) {
    reap(g_worker); // closing its socket ends it: serve() sees the end of its requests
  }
}

void start_isolated_worker() {
  std::lock_guard<std::mutex> lock(g_mutex);
  ensure_worker();
}

std::string run_isolated(const std::string& what, IsolatedRequest request,
                         const std::string& argument, onnx::ModelProto& model) {
  const std::string kind(1, static_cast<char>(request));
  const std::string serialised = serialise_request_model(model);
  const std::vector<std::string_view> message{kind, argument, serialised};
  std::lock_guard<std::mutex> lock(g_mutex);
  for (int attempt = 0;; ++attempt) {
    ensure_worker();
    util::test_point("onnx-worker:request");
    if (util::send_fields(g_worker.fd, message)) {
      break;
    }
    // The worker was gone before it read anything (killed from outside, or by the
    // death of the thread that forked it): once more with a new one.
    reap(g_worker);
    if (attempt == 1) {
      throw Error(what + ": cannot reach the ONNX worker process");
    }
  }
  std::vector<std::string> reply;
  bool received = false;
  try {
    received = util::receive_message(g_worker.fd, 1, reply) && !reply[0].empty();
  } catch (const Error&) {
    received = false; // a garbled reply: as from a worker that died
  }
  if (!received) {
    int status = reap(g_worker);
    util::await_pending_interrupt(); // the interrupt handler stopped it: no crash to report
    throw InferenceCrash(
        what + ": ONNX crashed on this model (" +
        (WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                             : "exit status " + std::to_string(WEXITSTATUS(status))) +
        "): a node's inputs or attributes are malformed in a way the ONNX checker misses");
  }
  if (ends_worker(request, reply[0])) {
    reap(g_worker);
  }
  return reply[0];
}

} // namespace npucc::check
