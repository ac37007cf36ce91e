#include "runtime/ort_session.h"
#include "runtime/runtime.h"

#include "npucc/error.h"
#include "util/eintr.h"
#include "util/file_io.h"
#include "util/interrupt.h"
#include "util/private_temp_folder.h"
#include "util/socket_channel.h"
#include "util/strings.h"
#include "util/test_point.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <optional>
#include <string_view>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

// ONNX Runtime runs in a child process: it has crashed on graphs it accepted (a float16
// LSTM in 1.30), and a crash must be one error line, not npucc's death. The child is
// forked per GraphRuntime, loads the library itself (npucc never does), serves one request
// per graph and ends when its socket closes; the parent always waits for it.
namespace npucc::runtime {

namespace {

// Messages are util::encode_fields lists: a request {kind (empty: run one graph; else the
// name of a registered PairFold to fold two graphs' outputs with), what, "b" (a serialised
// model follows) or "f" (a file's path follows), the model or path, the same three of the
// second graph (empty when it runs one), "b" or "f" again, the input sets (encode_sets) or
// the path of a file holding them, output names (one per line)}, a reply {"0" + payload} or
// {"1" + error line}; the first reply, unasked, says whether the runtime loaded ("0" + its
// version).
constexpr size_t k_request_fields = 10;

detail::OrtRunner::Source source_at(const std::vector<std::string_view>& request, size_t at) {
  const bool in_file = request[at + 1] == "f";
  return {in_file ? std::string_view() : request[at + 2],
          in_file ? std::string(request[at + 2]) : std::string(), std::string(request[at])};
}

std::string answer(detail::OrtRunner& ort, const std::vector<std::string_view>& request) {
  std::vector<std::string> outputs;
  if (!request[9].empty()) {
    outputs = util::split(std::string(request[9]), '\n');
  }
  const auto inputs = request[7] == "f" ? decode_sets(util::read_file(std::string(request[8])))
                                        : decode_sets(request[8]);
  const auto a = source_at(request, 1);
  if (request[0].empty()) {
    return encode_sets(ort.run(a.model, a.file, inputs, outputs), "0");
  }
  const auto b = source_at(request, 4);
  auto fold = make_pair_fold(std::string(request[0]), a.what, b.what);
  ort.run_pair(a, b, inputs, outputs,
               [&](const std::vector<TensorView>& a_values,
                   const std::vector<TensorView>& b_values) { fold->fold(a_values, b_values); });
  return "0" + fold->result();
}

[[noreturn]] void serve(int fd) {
  std::unique_ptr<detail::OrtRunner> ort;
  std::string hello;
  try {
    ort = std::make_unique<detail::OrtRunner>();
    hello = "0" + ort->version();
  } catch (const Error& e) {
    hello = "1" + e.line();
  }
  if (!util::send_all(fd, util::encode_fields({hello})) || !ort) {
    ::_exit(0);
  }
  std::string buffer; // the request: a graph of up to hundreds of MB, viewed, not copied
  for (;;) {
    std::vector<std::string_view> request;
    std::string reply;
    try {
      if (!util::receive_message(fd, k_request_fields, buffer, request)) {
        ::_exit(0); // the parent is done with this runtime
      }
      reply = answer(*ort, request);
    } catch (const Error& e) {
      reply = "1" + e.line();
    } catch (const std::exception& e) {
      reply = "1" + util::first_line(e.what());
    }
    if (!util::send_fields(fd, {reply})) { // not assembled: a reply can be hundreds of MB
      ::_exit(0);
    }
  }
}

// The child's side of fork(), as check/isolated_worker.cpp sets its worker up.
[[noreturn]] void become_child(int fd, pid_t parent, bool from_main_thread) {
  for (int fatal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
    ::signal(fatal, SIG_DFL); // a crash is reported by the parent, not by inherited handlers
  }
  util::become_quiet_child(); // npucc stops and reaps it on an interrupt (util/interrupt.h)
  if (from_main_thread) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL); // a killed npucc takes its runtime along
  }
  if (::getppid() != parent) {
    ::_exit(3);
  }
  if (fd != 3) {
    ::dup2(fd, 3);
    fd = 3;
  }
  ::close_range(4, ~0U, 0);
  util::forget_children_after_fork();
  serve(fd);
}

// Encoded input sets for a request: inline when small, else in a file of a private
// temporary folder (util/private_temp_folder.h: the user's data), removed when this ends.
class InputsFile {
public:
  explicit InputsFile(std::string encoded) {
    if (encoded.size() < k_inline_limit) {
      m_encoded = std::move(encoded);
      return;
    }
    m_folder.emplace("npucc-inputs");
    m_path = (m_folder->path() / "inputs").string();
    util::write_file_atomic(m_path, encoded, util::Durability::unsynced,
                            util::FileMode::exactly(util::PrivateTempFolder::k_file_mode));
  }

  std::string_view kind() const { return m_folder ? "f" : "b"; }
  std::string_view field() const { return m_folder ? m_path : m_encoded; }

private:
  static constexpr size_t k_inline_limit = 1 << 20;
  std::string m_encoded;
  std::optional<util::PrivateTempFolder> m_folder;
  std::string m_path;
};

class RuntimeProcess : public GraphRuntime {
public:
  // Forks the child, which loads the library while the caller goes on (writing the graphs
  // it will run); the first version() or run() waits for it.
  RuntimeProcess() { launch(); }
  ~RuntimeProcess() override { stop(); }
  RuntimeProcess(const RuntimeProcess&) = delete;
  RuntimeProcess& operator=(const RuntimeProcess&) = delete;

  std::string version() override {
    await_loaded();
    return m_version;
  }

  void restart_if_stopped() override {
    if (m_pid <= 0) {
      start(); // the one before crashed
    }
  }

  // Once: throws npucc::Error in one line when the child could not load ONNX Runtime.
  void await_loaded();

  std::vector<TensorSet> run(const std::string& what, const GraphSource& graph,
                             const std::vector<TensorSet>& inputs,
                             const std::vector<std::string>& outputs) override {
    std::string buffer;
    return decode_sets(exchange("", what, graph, nullptr, inputs, outputs, buffer));
  }

  std::string run_folded(const std::string& fold, const Graph& a, const Graph& b,
                         const std::vector<TensorSet>& inputs,
                         const std::vector<std::string>& outputs) override {
    make_pair_fold(fold, a.what, b.what); // refused here, not in the child, when unknown
    std::string buffer;
    return std::string(exchange(fold, a.what, a.source, &b, inputs, outputs, buffer));
  }

private:
  // Sends one request (a second graph when `b` is not null) and returns the reply's payload,
  // viewed in `buffer`, which receives it (not copied out: it can be hundreds of MB).
  std::string_view exchange(const std::string& kind, const std::string& what,
                            const GraphSource& a, const Graph* b,
                            const std::vector<TensorSet>& inputs,
                            const std::vector<std::string>& outputs, std::string& buffer);
  void start() {
    launch();
    await_loaded();
  }
  void launch();
  // Closes the socket (the child's loop ends) and waits for the child; its wait status.
  int stop();
  Error crashed(const std::string& what) {
    int status = stop();
    util::await_pending_interrupt(); // the interrupt handler stopped it: not a crash
    return Error(what + ": ONNX Runtime " + util::describe_wait_status(status) +
                     " running this graph",
                 "the graph is valid ONNX, so this is the runtime's bug: report it with the "
                 "graph (--emit-emulation writes it)");
  }

  pid_t m_pid = -1;
  int m_fd = -1;
  std::string m_version;
};

std::string_view RuntimeProcess::exchange(const std::string& kind, const std::string& a_what,
                                          const GraphSource& a, const Graph* b,
                                          const std::vector<TensorSet>& inputs,
                                          const std::vector<std::string>& outputs,
                                          std::string& buffer) {
  const std::string what = b == nullptr ? a_what : a_what + " and " + b->what;
  if (m_pid <= 0) {
    start(); // the one before crashed
  }
  await_loaded();
  std::string names;
  for (const auto& name : outputs) {
    names += (names.empty() ? "" : "\n") + name;
  }
  util::test_point("runtime:run");
  // Large input sets go through a file, as graphs do: written at once, read at once, where
  // the socket would pass them a buffer's worth per wakeup of each side.
  const InputsFile file(encode_sets(inputs));
  auto graph_fields = [](std::string_view graph_what, const GraphSource& graph) {
    const bool in_file = !graph.file.empty();
    return std::vector<std::string_view>{graph_what, in_file ? "f" : "b",
                                         in_file ? graph.file : graph.bytes};
  };
  std::vector<std::string_view> fields{kind};
  for (auto field : graph_fields(a_what, a)) {
    fields.push_back(field);
  }
  for (auto field : b != nullptr ? graph_fields(b->what, b->source)
                                 : std::vector<std::string_view>{"", "", ""}) {
    fields.push_back(field);
  }
  fields.insert(fields.end(), {file.kind(), file.field(), names});
  if (!util::send_fields(m_fd, fields)) {
    throw crashed(what);
  }
  util::test_point("runtime:sent"); // its files are all there: the graph's, the inputs'
  std::vector<std::string_view> reply;
  if (!util::receive_message(m_fd, 1, buffer, reply) || reply[0].empty()) {
    throw crashed(what);
  }
  if (reply[0][0] != '0') {
    const std::string line(reply[0].substr(1));
    throw Error(kind.empty() ? what + ": " + line : line);
  }
  return reply[0].substr(1);
}

void RuntimeProcess::launch() {
  m_version.clear(); // a new child says hello again
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    throw Error(std::string("runtime: cannot create a socket: ") + std::strerror(errno));
  }
  const pid_t parent = ::getpid();
  const bool from_main_thread = ::gettid() == parent;
  // Until watch_child(): a signal must not find a child the handler does not know about.
  util::DeferInterrupts forking;
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(std::string("runtime: cannot fork: ") + std::strerror(errno));
  }
  if (child == 0) {
    ::close(fds[0]);
    become_child(fds[1], parent, from_main_thread);
  }
  ::close(fds[1]);
  m_pid = child;
  m_fd = fds[0];
  util::watch_child(child);
}

void RuntimeProcess::await_loaded() {
  if (!m_version.empty()) {
    return;
  }
  std::vector<std::string> hello;
  if (!util::receive_message(m_fd, 1, hello) || hello[0].empty()) {
    int status = stop();
    util::await_pending_interrupt(); // the interrupt handler stopped it: not a failure
    throw Error("ONNX Runtime " + util::describe_wait_status(status) + " while loading");
  }
  if (hello[0][0] != '0') {
    stop();
    throw Error(hello[0].substr(1));
  }
  m_version = hello[0].substr(1);
}

int RuntimeProcess::stop() {
  int status = 0;
  if (m_fd >= 0) {
    ::close(m_fd);
    m_fd = -1;
  }
  if (m_pid > 0) {
    util::retry_on_eintr([&] { return ::waitpid(m_pid, &status, 0); });
    util::forget_child(m_pid);
    m_pid = -1;
  }
  return status;
}

} // namespace

namespace detail {
// All forked at once: the children load the library while the caller goes on.
std::vector<std::unique_ptr<GraphRuntime>> start_runtime_processes(size_t count) {
  std::vector<std::unique_ptr<GraphRuntime>> started;
  for (size_t i = 0; i < count; ++i) {
    started.push_back(std::make_unique<RuntimeProcess>());
  }
  return started;
}
} // namespace detail

} // namespace npucc::runtime
