// The Redis backend (transport.h) through hiredis: one string value per key, named
// "npucc:bundle:<key>"; `cache ls --remote` lists them with SCAN.
#include "cache/remote/credentials.h"
#include "cache/remote/resp_stream.h"
#include "cache/remote/transport.h"
#include "util/remote_url.h"
#include "util/shared_library.h"
#include "util/strings.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <hiredis/hiredis.h>

namespace npucc::cache::remote {

namespace fs = std::filesystem;

namespace {

constexpr const char* k_prefix = "npucc:bundle:";

// hiredis's functions, loaded when the first Redis transport is made
// (util/shared_library.h): runs without a remote cache never load it.
#define NPUCC_HIREDIS_FUNCTION(name)                                                               \
  decltype(&::name) name = library.function<decltype(&::name)>(#name)
struct Hiredis {
  util::SharedLibrary library{NPUCC_LIBHIREDIS_SONAME, NPUCC_LIBHIREDIS_PACKAGE};
  NPUCC_HIREDIS_FUNCTION(redisConnectWithTimeout);
  NPUCC_HIREDIS_FUNCTION(redisSetTimeout);
  NPUCC_HIREDIS_FUNCTION(redisCommand);
  NPUCC_HIREDIS_FUNCTION(freeReplyObject);
  NPUCC_HIREDIS_FUNCTION(redisFree);
};
#undef NPUCC_HIREDIS_FUNCTION

// Throws npucc::Error when hiredis cannot be loaded; tries again at the next call.
const Hiredis& hiredis() {
  static const Hiredis loaded;
  return loaded;
}

struct Reply {
  redisReply* reply = nullptr;
  ~Reply() {
    if (reply != nullptr) {
      hiredis().freeReplyObject(reply);
    }
  }
};

timeval timeval_of(double seconds) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(seconds);
  tv.tv_usec = static_cast<suseconds_t>((seconds - std::floor(seconds)) * 1e6);
  return tv;
}

class RedisTransport : public Transport {
public:
  explicit RedisTransport(const RemoteCacheConfig& config)
      : m_config(config), m_credentials(load_credentials(config)) {
    hiredis();
  }
  ~RedisTransport() override { disconnect(); }
  RedisTransport(const RedisTransport&) = delete;
  RedisTransport& operator=(const RedisTransport&) = delete;

  std::string describe() const override { return m_config.url; }

  // The value streams from the socket into the receiver (resp_stream.h): never whole in
  // memory.
  TransferResult get(const std::string& key, BundleReceiver& receiver) override {
    std::string problem;
    const resp::Deadline deadline = deadline_from_now();
    if (!connect(deadline, problem)) {
      return {failure(), problem, 0};
    }
    resp::Reply reply;
    uint64_t received = 0;
    bool in_step = resp::Connection(m_context->fd, deadline)
                       .get(k_prefix + key, receiver, reply, received, problem);
    if (!in_step) {
      disconnect();
      return {Status::error, m_config.url + ": GET failed: " + problem, received};
    }
    if (reply.kind == resp::ReplyKind::nil) {
      return {Status::absent, "", 0};
    }
    if (reply.kind == resp::ReplyKind::error) {
      bool refused = refused_credentials(reply.text);
      return {refused ? Status::refused : Status::error,
              m_config.url + ": GET " + (refused ? "refused: " : "answered an error: ") +
                  util::cut_for_message(reply.text),
              0};
    }
    if (reply.kind != resp::ReplyKind::value) {
      return {Status::error, m_config.url + ": GET answered an unexpected reply", 0};
    }
    return {Status::ok, "", received};
  }

  // The value streams from the file (resp_stream.h): never whole in memory.
  TransferResult put(const std::string& key, const fs::path& from) override {
    std::string problem;
    const resp::Deadline deadline = deadline_from_now();
    if (!connect(deadline, problem)) {
      return {failure(), problem, 0};
    }
    std::error_code ec;
    uint64_t size = fs::file_size(from, ec);
    resp::Reply reply;
    if (!resp::Connection(m_context->fd, deadline).set(k_prefix + key, from, reply, problem)) {
      disconnect();
      return {Status::error, m_config.url + ": SET failed: " + problem, 0};
    }
    if (reply.kind == resp::ReplyKind::error) {
      return {refused_credentials(reply.text) ? Status::refused : Status::error,
              m_config.url + ": SET refused: " + util::cut_for_message(reply.text), 0};
    }
    if (reply.kind != resp::ReplyKind::status) {
      return {Status::error, m_config.url + ": SET answered an unexpected reply", 0};
    }
    return {Status::ok, "", ec ? 0 : size};
  }

  // hiredis's commands: each wait bounded by the timeout, not the whole listing (cache ls
  // --remote is asked for by hand, never on a compile's way).
  std::optional<std::vector<RemoteObject>> list(std::string& problem) override {
    std::vector<RemoteObject> objects;
    if (!connect(deadline_from_now(), problem)) {
      return objects;
    }
    std::string cursor = "0";
    std::string pattern = std::string(k_prefix) + "*";
    do {
      Reply reply;
      reply.reply = command(problem, "SCAN %s MATCH %b COUNT 1000", cursor.c_str(), pattern.data(),
                            pattern.size());
      if (reply.reply == nullptr || reply.reply->type != REDIS_REPLY_ARRAY ||
          reply.reply->elements != 2) {
        problem = problem.empty() ? m_config.url + ": SCAN answered an unexpected reply" : problem;
        return objects;
      }
      cursor = std::string(reply.reply->element[0]->str, reply.reply->element[0]->len);
      redisReply* keys = reply.reply->element[1];
      for (size_t i = 0; i < keys->elements; ++i) {
        std::string name(keys->element[i]->str, keys->element[i]->len);
        Reply length;
        length.reply = command(problem, "STRLEN %b", name.data(), name.size());
        if (length.reply == nullptr) {
          return objects;
        }
        objects.push_back(
            {name.substr(std::strlen(k_prefix)), length.reply->type == REDIS_REPLY_INTEGER
                                                     ? static_cast<uint64_t>(length.reply->integer)
                                                     : 0});
      }
    } while (cursor != "0");
    return objects;
  }

private:
  // A connection that failed half-way (refused credentials, a SELECT refused) is closed:
  // the next request starts again, never on a connection that skipped a step.
  // Every transfer (connect, AUTH, SELECT, the command and its reply) ends by then.
  resp::Deadline deadline_from_now() const {
    return std::chrono::steady_clock::now() +
           std::chrono::milliseconds(std::lround(m_config.timeout * 1000));
  }

  bool connect(resp::Deadline deadline, std::string& problem) {
    if (m_context != nullptr) {
      return true;
    }
    if (!open_connection(deadline, problem)) {
      disconnect();
      return false;
    }
    return true;
  }

  bool open_connection(resp::Deadline deadline, std::string& problem) {
    util::ParsedUrl url = util::parse_url(m_config.url);
    m_context = hiredis().redisConnectWithTimeout(
        url.host.c_str(), url.port == 0 ? 6379 : url.port,
        timeval_of(std::min(m_config.connect_timeout, m_config.timeout)));
    if (m_context == nullptr || m_context->err != 0) {
      problem = m_config.url +
                ": cannot connect: " + (m_context != nullptr ? m_context->errstr : "out of memory");
      return false;
    }
    hiredis().redisSetTimeout(m_context, timeval_of(m_config.timeout));
    resp::Connection connection(m_context->fd, deadline);
    if (!authenticate(connection, problem)) {
      return false;
    }
    std::string db = url.path.size() > 1 ? url.path.substr(1) : "";
    if (!db.empty() && db != "0") {
      resp::Reply reply;
      if (!connection.command({"SELECT", db}, reply, problem)) {
        problem = m_config.url + ": SELECT failed: " + problem;
        return false;
      }
      if (reply.kind != resp::ReplyKind::status) {
        problem = m_config.url + ": SELECT " + db + " refused";
        return false;
      }
    }
    return true;
  }

  Status failure() const { return m_refused ? Status::refused : Status::error; }

  // NOAUTH (no AUTH given), WRONGPASS (a wrong one), NOPERM (an ACL user without the right).
  static bool refused_credentials(const std::string& text) {
    return text.rfind("NOAUTH", 0) == 0 || text.rfind("WRONGPASS", 0) == 0 ||
           text.rfind("NOPERM", 0) == 0 || text.rfind("ERR invalid password", 0) == 0;
  }

  // A connection out of step with the protocol (a reply cut short or left unread) is
  // closed; the next request connects again.
  void disconnect() {
    if (m_context != nullptr) {
      hiredis().redisFree(m_context);
      m_context = nullptr;
    }
  }

  // AUTH with the secret as an argument: it is never part of a message. Spoken by
  // resp::Connection, under the transfer's deadline, as the GET or SET that follows.
  bool authenticate(resp::Connection& connection, std::string& problem) {
    if (m_credentials.empty()) {
      return true;
    }
    resp::Reply reply;
    bool answered = m_credentials.user.empty()
                        ? connection.command({"AUTH", m_credentials.token}, reply, problem)
                        : connection.command({"AUTH", m_credentials.user, m_credentials.password},
                                             reply, problem);
    if (!answered) {
      problem = m_config.url + ": AUTH failed: " + problem;
      return false;
    }
    if (reply.kind == resp::ReplyKind::error) {
      m_refused = true;
      problem = m_config.url + ": AUTH refused: " + util::cut_for_message(reply.text);
      return false;
    }
    if (reply.kind != resp::ReplyKind::status) {
      problem = m_config.url + ": AUTH answered an unexpected reply";
      return false;
    }
    return true;
  }

  // nullptr on an I/O error or timeout; the connection is then unusable.
  template <typename... Args>
  redisReply* command(std::string& problem, const char* format, Args... args) {
    if (m_context == nullptr || m_context->err != 0) {
      problem = m_config.url + ": not connected";
      return nullptr;
    }
    auto* reply = static_cast<redisReply*>(hiredis().redisCommand(m_context, format, args...));
    if (reply == nullptr) {
      problem = m_config.url + ": " +
                (m_context->err == REDIS_ERR_IO && errno == EAGAIN
                     ? std::string("no answer within the timeout")
                     : std::string(m_context->errstr));
    }
    return reply;
  }

  RemoteCacheConfig m_config;
  Credentials m_credentials;
  bool m_refused = false; // AUTH was refused: every request fails so
  redisContext* m_context = nullptr;
};

} // namespace

std::unique_ptr<Transport> make_redis_transport(const RemoteCacheConfig& config) {
  return std::make_unique<RedisTransport>(config);
}

} // namespace npucc::cache::remote
