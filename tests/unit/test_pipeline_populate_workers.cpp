#include "npucc/cache.h"
#include "npucc/error.h"
#include "pipeline/populate_workers.h"
#include "test_support.h"
#include "util/file_io.h"
#include "util/parallel.h"
#include "util/socket_channel.h"

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <doctest/doctest.h>
#include <map>
#include <mutex>
#include <set>
#include <sys/socket.h>
#include <thread>
#include <tuple>
#include <unistd.h>

namespace fs = std::filesystem;
using npucc::pipeline::RemoteState;
using npucc::pipeline::WorkerReply;

namespace {

// Every model's reply, by index; fails the test if one comes twice.
struct Collected {
  std::map<size_t, WorkerReply> replies;
  npucc::pipeline::ItemDone done() {
    return [this](size_t index, const WorkerReply& reply) {
      CHECK(replies.count(index) == 0);
      replies[index] = reply;
    };
  }
};

WorkerReply pid_reply(const std::string& extra = {}) {
  WorkerReply reply;
  reply.item.outcome = npucc::CacheOutcome::miss;
  reply.item.detail = std::to_string(::getpid()) + extra;
  return reply;
}

fs::path write_model(const fs::path& dir, const std::string& name, const std::string& op) {
  return npucc::test::write_text_model(dir / name, R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[1,4] x) => (float[1,4] y) {
      a = Relu(x)
      y = )" + op + R"((a)
    }
  )");
}

// Every file of every entry, by path relative to the cache; entry.npucc without its
// creation time, the one thing two runs may not share.
std::map<std::string, std::string> entry_files(const fs::path& cache) {
  std::map<std::string, std::string> files;
  for (const auto& file : fs::recursive_directory_iterator(cache / "entries")) {
    if (!file.is_regular_file()) {
      continue;
    }
    std::string text = npucc::util::read_file(file.path());
    if (file.path().filename() == "entry.npucc") {
      std::string kept;
      size_t at = 0;
      while (at < text.size()) {
        size_t end = text.find('\n', at);
        end = end == std::string::npos ? text.size() : end + 1;
        std::string line = text.substr(at, end - at);
        if (line.rfind("created", 0) != 0 && line.rfind("end ", 0) != 0) {
          kept += line;
        }
        at = end;
      }
      text = kept;
    }
    files[fs::relative(file.path(), cache).string()] = text;
  }
  return files;
}

} // namespace

TEST_SUITE("npucc::populate_workers") {
  TEST_CASE("the wire format keeps any bytes and waits for a whole message") {
    std::string binary("a\0b:c\n\xff", 7);
    std::string message = npucc::util::encode_fields({"12", "", binary, "x:y"});
    std::vector<std::string> fields;
    SUBCASE("whole") {
      std::string buffer = message + npucc::util::encode_fields({"next"});
      REQUIRE(npucc::util::decode_fields(buffer, 4, fields));
      CHECK(fields == std::vector<std::string>{"12", "", binary, "x:y"});
      REQUIRE(npucc::util::decode_fields(buffer, 1, fields));
      CHECK(fields == std::vector<std::string>{"next"});
      CHECK(buffer.empty());
    }
    SUBCASE("byte by byte") {
      std::string buffer;
      for (size_t i = 0; i + 1 < message.size(); ++i) {
        buffer += message[i];
        CHECK_FALSE(npucc::util::decode_fields(buffer, 4, fields));
      }
      buffer += message.back();
      REQUIRE(npucc::util::decode_fields(buffer, 4, fields));
      CHECK(fields[2] == binary);
    }
    SUBCASE("garbage") {
      std::string buffer = "x3:abc";
      CHECK_THROWS_AS(npucc::util::decode_fields(buffer, 1, fields), npucc::Error);
      buffer = std::string(40, '7');
      CHECK_THROWS_AS(npucc::util::decode_fields(buffer, 1, fields), npucc::Error);
    }
  }

  TEST_CASE("receive_message takes one large message arriving in pieces") {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
    std::string large(3 << 20, '\0');
    for (size_t i = 0; i < large.size(); ++i) {
      large[i] = static_cast<char>(i * 7);
    }
    std::thread sender([&] {
      npucc::util::send_all(fds[0], npucc::util::encode_fields({"what", large, ""}));
      ::close(fds[0]);
    });
    std::vector<std::string> fields;
    CHECK(npucc::util::receive_message(fds[1], 3, fields));
    sender.join();
    REQUIRE(fields.size() == 3);
    CHECK(fields[0] == "what");
    CHECK(fields[1] == large);
    CHECK(fields[2].empty());
    CHECK_FALSE(npucc::util::receive_message(fds[1], 1, fields)); // the peer is gone
    ::close(fds[1]);
  }

  TEST_CASE("models are compiled in worker processes, each once") {
    Collected collected;
    npucc::pipeline::compile_in_workers(
        12, 3, [](size_t, RemoteState) { return pid_reply(); }, collected.done());
    REQUIRE(collected.replies.size() == 12);
    std::set<std::string> pids;
    for (const auto& [index, reply] : collected.replies) {
      CHECK_FALSE(reply.item.failed);
      CHECK(reply.item.detail != std::to_string(::getpid()));
      pids.insert(reply.item.detail);
    }
    CHECK(pids.size() >= 1);
    CHECK(pids.size() <= 3);
  }

  TEST_CASE("-j 1 and a single model compile in the calling process") {
    for (auto [count, jobs] : {std::pair<size_t, unsigned>{4, 1}, {1, 4}}) {
      Collected collected;
      npucc::pipeline::compile_in_workers(
          count, jobs, [](size_t, RemoteState) { return pid_reply(); }, collected.done());
      REQUIRE(collected.replies.size() == count);
      for (const auto& [index, reply] : collected.replies) {
        CHECK(reply.item.detail == std::to_string(::getpid()));
      }
    }
  }

  TEST_CASE("-j N is N cores in all: each compile gets its share of them") {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    // (models, jobs) -> threads each compile may use
    for (auto [count, jobs, share] : {std::tuple<size_t, unsigned, unsigned>{4, 1, 1},
                                      {8, 2, 1},
                                      {1, 2, 2},
                                      {2, 4, 2},
                                      {3, 4, 1}}) {
      CAPTURE(count);
      CAPTURE(jobs);
      Collected collected;
      npucc::pipeline::compile_in_workers(
          count, jobs,
          [](size_t, RemoteState) {
            WorkerReply reply;
            reply.item.detail = std::to_string(npucc::util::thread_budget());
            return reply;
          },
          collected.done());
      REQUIRE(collected.replies.size() == count);
      for (const auto& [index, reply] : collected.replies) {
        CHECK(reply.item.detail == std::to_string(std::min(share, cores)));
      }
    }
    CHECK(npucc::util::thread_budget() == cores); // restored in the caller
  }

  TEST_CASE("parallel_for keeps to the thread budget") {
    std::mutex mutex;
    std::set<std::thread::id> seen;
    unsigned previous = npucc::util::set_thread_budget(1);
    npucc::util::parallel_for(64, [&](size_t) {
      std::lock_guard<std::mutex> lock(mutex);
      seen.insert(std::this_thread::get_id());
    });
    npucc::util::set_thread_budget(previous);
    CHECK(seen == std::set<std::thread::id>{std::this_thread::get_id()});
  }

  TEST_CASE("a multi-threaded caller compiles in-process: forking it is not safe") {
    std::mutex mutex;
    std::condition_variable wake;
    bool release = false;
    std::thread other([&] {
      std::unique_lock<std::mutex> lock(mutex);
      wake.wait(lock, [&] { return release; });
    });
    Collected collected;
    npucc::pipeline::compile_in_workers(
        3, 2, [](size_t, RemoteState) { return pid_reply(); }, collected.done());
    {
      std::lock_guard<std::mutex> lock(mutex);
      release = true;
    }
    wake.notify_all();
    other.join();
    REQUIRE(collected.replies.size() == 3);
    for (const auto& [index, reply] : collected.replies) {
      CHECK(reply.item.detail == std::to_string(::getpid()));
    }
  }

  TEST_CASE("a worker that dies fails its model in one line; the others go on") {
    int fatal = SIGKILL;
    SUBCASE("SIGKILL") {
      fatal = SIGKILL;
    }
    SUBCASE("SIGSEGV") {
      fatal = SIGSEGV;
    }
    Collected collected;
    npucc::pipeline::compile_in_workers(
        8, 2,
        [fatal](size_t index, RemoteState) {
          if (index == 3 || index == 5) {
            std::signal(fatal, SIG_DFL); // no doctest crash report from the worker
            ::raise(fatal);
          }
          return pid_reply();
        },
        collected.done());
    REQUIRE(collected.replies.size() == 8);
    for (const auto& [index, reply] : collected.replies) {
      if (index == 3 || index == 5) {
        CHECK(reply.item.failed);
        CHECK(reply.worker_lost);
        CHECK(reply.item.detail.find("killed by signal " + std::to_string(fatal)) !=
              std::string::npos);
        CHECK(reply.item.detail.find('\n') == std::string::npos);
      } else {
        CHECK_FALSE(reply.item.failed);
        CHECK_FALSE(reply.worker_lost);
      }
    }
  }

  TEST_CASE("a remote found down by one worker is down for the models handed out after") {
    Collected collected;
    npucc::pipeline::compile_in_workers(
        6, 2,
        [](size_t index, RemoteState remote) {
          if (index == 0) {
            WorkerReply reply = pid_reply();
            reply.remote = RemoteState::down;
            return reply;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(30));
          return pid_reply(remote == RemoteState::down ? " told down" : "");
        },
        collected.done());
    REQUIRE(collected.replies.size() == 6);
    CHECK(collected.replies[5].item.detail.find("told down") != std::string::npos);
    CHECK(collected.replies[4].item.detail.find("told down") != std::string::npos);
  }

  TEST_CASE("populate -j 2 stores the same entries as -j 1; a broken model fails alone") {
    fs::path dir = npucc::test::temp_dir("populate-workers");
    fs::create_directories(dir / "models");
    for (const char* op : {"Neg", "Abs", "Sigmoid", "Tanh", "Exp"}) {
      write_model(dir / "models", std::string(op) + ".onnx", op);
    }
    npucc::util::write_file_atomic(dir / "models" / "broken.onnx", "not a model");
    std::map<unsigned, std::map<std::string, std::string>> files;
    for (unsigned jobs : {1u, 2u}) {
      npucc::CacheConfig config;
      config.dir = dir / ("cache" + std::to_string(jobs));
      config.dir_source = npucc::SettingSource::command_line;
      npucc::init_cache_dir(config.dir);
      npucc::PopulateOptions options;
      options.inputs = {dir / "models"};
      options.jobs = jobs;
      size_t calls = 0;
      auto summary = npucc::populate_cache(
          config, options, [&](const npucc::PopulateItem&, size_t finished, size_t total) {
            ++calls;
            CHECK(finished == calls);
            CHECK(total == 6);
          });
      CHECK(calls == 6);
      CHECK(summary.compiled == 5);
      CHECK(summary.failed == 1);
      REQUIRE(summary.items.size() == 6);
      // In input order: sorted names, capitals first.
      CHECK(summary.items[0].model.filename() == "Abs.onnx");
      CHECK(summary.items[5].model.filename() == "broken.onnx");
      CHECK(summary.items[5].failed);
      CHECK(summary.items[5].detail.find("broken.onnx") != std::string::npos);
      files[jobs] = entry_files(config.dir);
      auto again = npucc::populate_cache(config, options);
      CHECK(again.cached == 5);
      CHECK(again.compiled == 0);
    }
    CHECK(files[1].size() >= 5 * 3);
    CHECK(files[1] == files[2]);
  }
}
