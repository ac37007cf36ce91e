#include "cache/entry_format.h"
#include "cache/remote/bundle.h"
#include "cache/remote/resp_stream.h"
#include "test_support.h"
#include "util/fd.h"
#include "util/file_io.h"
#include "util/socket_channel.h"

#include <chrono>
#include <doctest/doctest.h>
#include <sys/socket.h>

namespace {

namespace fs = std::filesystem;
using namespace npucc::cache::remote;
using npucc::util::Fd;

// A connected pair: [0] plays npucc's end, [1] the server's.
struct SocketPair {
  Fd ends[2] = {Fd(-1), Fd(-1)};
  SocketPair() {
    int fds[2] = {-1, -1};
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
    ends[0] = Fd(fds[0]);
    ends[1] = Fd(fds[1]);
  }
  // What npucc sent so far (the server end must have it queued).
  std::string sent() {
    std::string out;
    char chunk[4096];
    ssize_t n = 0;
    while ((n = ::recv(ends[1].get(), chunk, sizeof(chunk), MSG_DONTWAIT)) > 0) {
      out.append(chunk, static_cast<size_t>(n));
    }
    return out;
  }
};

// A bundle of a header and one file, as a server would hold it.
std::string bundle_bytes(const fs::path& dir) {
  fs::create_directories(dir / "src");
  npucc::util::write_file_atomic(dir / "src" / npucc::cache::k_header_file, "header\n");
  npucc::util::write_file_atomic(dir / "src" / "high.onnx", std::string(9000, 'h'));
  write_bundle(dir / "src", {npucc::cache::k_header_file, "high.onnx"}, dir / "object");
  return npucc::util::read_file(dir / "object");
}

std::string bulk(const std::string& value) {
  return "$" + std::to_string(value.size()) + "\r\n" + value + "\r\n";
}

// A deadline no test reaches.
resp::Deadline far() {
  return std::chrono::steady_clock::now() + std::chrono::hours(1);
}

} // namespace

TEST_SUITE("npucc::cache::remote::resp") {
  TEST_CASE("a GET streams the value into the receiver and leaves the connection in step") {
    fs::path dir = npucc::test::temp_dir("resp-get");
    std::string object = bundle_bytes(dir);
    SocketPair pair;
    // The value, then the answer to the next command: a missing key.
    REQUIRE(npucc::util::send_all(pair.ends[1].get(), bulk(object) + "$-1\r\n"));
    resp::Connection connection(pair.ends[0].get(), far());
    fs::create_directories(dir / "into");
    BundleReceiver receiver(dir / "into");
    resp::Reply reply;
    uint64_t received = 0;
    std::string problem;
    REQUIRE(connection.get("npucc:bundle:k", receiver, reply, received, problem));
    CHECK(reply.kind == resp::ReplyKind::value);
    CHECK(received == object.size());
    CHECK(receiver.finish().ok);
    CHECK(npucc::util::read_file(dir / "into" / "high.onnx") == std::string(9000, 'h'));
    CHECK(pair.sent() == "*2\r\n$3\r\nGET\r\n$14\r\nnpucc:bundle:k\r\n");

    fs::create_directories(dir / "into2");
    BundleReceiver second(dir / "into2");
    REQUIRE(connection.get("npucc:bundle:other", second, reply, received, problem));
    CHECK(reply.kind == resp::ReplyKind::nil);
    CHECK(received == 0);
  }

  TEST_CASE("an error reply is read as one; a cut or malformed reply fails") {
    fs::path dir = npucc::test::temp_dir("resp-errors");
    std::string object = bundle_bytes(dir);
    fs::create_directories(dir / "into");
    resp::Reply reply;
    uint64_t received = 0;
    std::string problem;
    {
      SocketPair pair;
      REQUIRE(npucc::util::send_all(pair.ends[1].get(), "-NOAUTH Authentication required.\r\n"));
      BundleReceiver receiver(dir / "into");
      REQUIRE(resp::Connection(pair.ends[0].get(), far()).get("k", receiver, reply, received, problem));
      CHECK(reply.kind == resp::ReplyKind::error);
      CHECK(reply.text == "NOAUTH Authentication required.");
    }
    {
      SocketPair pair;
      std::string cut = bulk(object).substr(0, object.size() / 2);
      REQUIRE(npucc::util::send_all(pair.ends[1].get(), cut));
      ::shutdown(pair.ends[1].get(), SHUT_WR);
      fs::create_directories(dir / "cut");
      BundleReceiver receiver(dir / "cut");
      // honest: far() and past are deadlines handed in, not a clock measured here
      CHECK_FALSE(
          resp::Connection(pair.ends[0].get(), far()).get("k", receiver, reply, received, problem));
      CHECK(problem.find("closed the connection") != std::string::npos);
      CHECK(received < object.size());
      // honest: far() and past are deadlines handed in, not a clock measured here
      CHECK_FALSE(receiver.finish().ok);
    }
    {
      SocketPair pair;
      REQUIRE(npucc::util::send_all(pair.ends[1].get(), "$12x\r\n"));
      fs::create_directories(dir / "bad");
      BundleReceiver receiver(dir / "bad");
      problem.clear();
      // honest: far() and past are deadlines handed in, not a clock measured here
      CHECK_FALSE(
          resp::Connection(pair.ends[0].get(), far()).get("k", receiver, reply, received, problem));
      CHECK(problem.find("malformed value length") != std::string::npos);
    }
  }

  TEST_CASE("a value the receiver refuses stops the read") {
    fs::path dir = npucc::test::temp_dir("resp-refused");
    std::string object = bundle_bytes(dir);
    object[object.size() / 2] ^= 0x20;
    SocketPair pair;
    REQUIRE(npucc::util::send_all(pair.ends[1].get(), bulk(object)));
    fs::create_directories(dir / "into");
    BundleReceiver receiver(dir / "into");
    resp::Reply reply;
    uint64_t received = 0;
    std::string problem;
    // honest: far() and past are deadlines handed in, not a clock measured here
    CHECK_FALSE(resp::Connection(pair.ends[0].get(), far()).get("k", receiver, reply, received, problem));
    CHECK(problem.find("refused") != std::string::npos);
    // honest: far() and past are deadlines handed in, not a clock measured here
    CHECK_FALSE(receiver.problem().empty());
  }

  TEST_CASE("a SET sends the file as the value and reads the status") {
    fs::path dir = npucc::test::temp_dir("resp-set");
    std::string object = bundle_bytes(dir);
    SocketPair pair;
    REQUIRE(npucc::util::send_all(pair.ends[1].get(), "+OK\r\n"));
    resp::Reply reply;
    std::string problem;
    REQUIRE(resp::Connection(pair.ends[0].get(), far()).set("name", dir / "object", reply, problem));
    CHECK(reply.kind == resp::ReplyKind::status);
    CHECK(reply.text == "OK");
    CHECK(pair.sent() == "*3\r\n$3\r\nSET\r\n$4\r\nname\r\n" + bulk(object));
  }

  TEST_CASE("a command's words are sent as one array; its status or error is read") {
    SocketPair pair;
    REQUIRE(npucc::util::send_all(pair.ends[1].get(), "+OK\r\n-WRONGPASS invalid\r\n"));
    resp::Connection connection(pair.ends[0].get(), far());
    resp::Reply reply;
    std::string problem;
    REQUIRE(connection.command({"SELECT", "3"}, reply, problem));
    CHECK(reply.kind == resp::ReplyKind::status);
    REQUIRE(connection.command({"AUTH", "user", "secret"}, reply, problem));
    CHECK(reply.kind == resp::ReplyKind::error);
    CHECK(reply.text == "WRONGPASS invalid");
    CHECK(pair.sent() ==
          "*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n*3\r\n$4\r\nAUTH\r\n$4\r\nuser\r\n$6\r\nsecret\r\n");
  }

  TEST_CASE("past the transfer's deadline nothing more is sent or read") {
    // A server that keeps sending (here: a value it has only begun) cannot hold the reader
    // past the deadline: with the deadline gone, the next wait ends at once.
    fs::path dir = npucc::test::temp_dir("resp-deadline");
    std::string object = bundle_bytes(dir);
    const auto past = std::chrono::steady_clock::now() - std::chrono::seconds(1);
    fs::create_directories(dir / "into");
    resp::Reply reply;
    uint64_t received = 0;
    std::string problem;
    {
      SocketPair pair;
      REQUIRE(npucc::util::send_all(pair.ends[1].get(), bulk(object).substr(0, 100)));
      BundleReceiver receiver(dir / "into");
      // honest: far() and past are deadlines handed in, not a clock measured here
      CHECK_FALSE(resp::Connection(pair.ends[0].get(), past)
                      .get("k", receiver, reply, received, problem));
      CHECK(problem.find("not done within the timeout") != std::string::npos);
      CHECK(pair.sent().empty()); // not even the command went
    }
  }
}
