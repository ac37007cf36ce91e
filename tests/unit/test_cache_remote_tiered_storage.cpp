#include "cache/local_storage.h"
#include "cache/remote/tiered_storage.h"
#include "npucc/cache.h"
#include "npucc/version.h"
#include "test_cache_support.h"
#include "test_support.h"
#include "util/file_io.h"

#include <doctest/doctest.h>
#include <map>

namespace fs = std::filesystem;
using namespace npucc::cache;
using namespace npucc::cache::remote;

namespace {

// A remote held in memory, shared by the "machines" of one test; it can be made to fail.
struct Server {
  std::map<std::string, std::string> objects;
  bool down = false;
  // The network cuts every GET after this many bytes (as a server killed mid-transfer).
  size_t cut_after = std::string::npos;
  int gets = 0;
  int puts = 0;
};

class FakeTransport : public Transport {
public:
  explicit FakeTransport(Server& server) : m_server(server) {}
  std::string describe() const override { return "fake"; }
  TransferResult get(const std::string& key, BundleReceiver& receiver) override {
    ++m_server.gets;
    if (m_server.down) {
      return {Status::error, "fake: connection refused", 0};
    }
    auto found = m_server.objects.find(key);
    if (found == m_server.objects.end()) {
      return {Status::absent, "", 0};
    }
    receiver.expect_size(found->second.size());
    size_t end = std::min(found->second.size(), m_server.cut_after);
    // In small pieces, as a network delivers them.
    for (size_t at = 0; at < end; at += 777) {
      if (!receiver.feed(found->second.data() + at, std::min<size_t>(777, end - at))) {
        return {Status::error, "fake: the receiver stopped", at};
      }
    }
    if (end < found->second.size()) {
      return {Status::error, "fake: connection reset", end};
    }
    return {Status::ok, "", found->second.size()};
  }
  TransferResult put(const std::string& key, const fs::path& from) override {
    ++m_server.puts;
    if (m_server.down) {
      return {Status::error, "fake: connection refused", 0};
    }
    m_server.objects[key] = npucc::util::read_file(from);
    return {Status::ok, "", m_server.objects[key].size()};
  }
  std::optional<std::vector<RemoteObject>> list(std::string&) override { return std::nullopt; }

private:
  Server& m_server;
};

// One machine: its own cache folder, the shared server.
struct Machine {
  fs::path root;
  LocalStorage local;
  TieredStorage tiered;
  Machine(Server& server, const std::string& url, bool read_only = false)
      : root(npucc::test::temp_dir("machine")),
        local((npucc::init_cache_dir(root), fs::canonical(root))),
        tiered(local, config(url, read_only), std::make_unique<FakeTransport>(server)) {}

  static npucc::RemoteCacheConfig config(const std::string& url, bool read_only) {
    npucc::RemoteCacheConfig config;
    config.url = url;
    config.read_only = read_only;
    return config;
  }

  void store(const std::string& key) {
    fs::path source = npucc::test::temp_dir("source");
    npucc::util::write_file_atomic(source / "high.onnx", std::string(3000, 'h'));
    npucc::util::write_file_atomic(source / "manifest.json", "{}\n");
    tiered.store(npucc::test::entry_header(key), source, {"high.onnx", "manifest.json"},
                 SourceFiles::copy, Replace::no, {});
  }

  uint64_t counter(const std::string& name) {
    auto counters = local.stats().read();
    return counters.count(name) != 0 ? counters[name] : 0;
  }
};

const std::string k_key(64, 'a');

// Nothing left in the cache's tmp/ (staging folders, partial files).
bool no_temporaries(const fs::path& root) {
  std::error_code ec;
  return !fs::exists(root / "tmp") || fs::is_empty(root / "tmp", ec);
}

} // namespace

TEST_SUITE("npucc::cache::remote::TieredStorage") {
  TEST_CASE("machine B hits what machine A stored, through its local store") {
    Server server;
    Machine a(server, "fake://tiered-hit");
    a.store(k_key);
    CHECK(server.objects.count(k_key) == 1);
    CHECK(a.counter("remote.uploads") == 1);

    Machine b(server, "fake://tiered-hit");
    fs::path into = npucc::test::temp_dir("into");
    FetchResult fetched = b.tiered.fetch(k_key, into);
    REQUIRE(fetched.status == FetchStatus::hit);
    CHECK(b.tiered.served_remotely());
    CHECK(npucc::util::read_file(into / "high.onnx") == std::string(3000, 'h'));
    CHECK(b.counter("remote.hits") == 1);
    CHECK(b.counter("remote.bytes_down") == server.objects[k_key].size());
    // Now local: the remote is not asked again.
    int gets = server.gets;
    fs::path again = npucc::test::temp_dir("again");
    CHECK(b.tiered.fetch(k_key, again).status == FetchStatus::hit);
    CHECK_FALSE(b.tiered.served_remotely());
    CHECK(server.gets == gets);
    CHECK(b.local.verify(Fix::no).findings.empty());
  }

  TEST_CASE("an entry the local store refuses is removed and counted") {
    Server server;
    Machine a(server, "fake://tiered-refused");
    a.store(k_key);
    // A well-formed bundle whose entry is filed under another key: the local check
    // (header key == folder) refuses it.
    server.objects[std::string(64, 'b')] = server.objects[k_key];
    Machine b(server, "fake://tiered-refused");
    FetchResult fetched = b.tiered.fetch(std::string(64, 'b'), npucc::test::temp_dir("into"));
    CHECK(fetched.status == FetchStatus::absent);
    CHECK(b.counter("remote.rejected") == 1);
    CHECK(b.tiered.warning().find("rejected") != std::string::npos);
    CHECK(b.local.list(Check::sizes).empty());
  }

  TEST_CASE("a damaged object is rejected, never published, and leaves nothing behind") {
    Server server;
    Machine a(server, "fake://tiered-damaged");
    a.store(k_key);
    const std::string good = server.objects[k_key];
    Machine b(server, "fake://tiered-damaged");
    SUBCASE("one byte flipped in a file") {
      server.objects[k_key][server.objects[k_key].size() / 2] ^= 0x40;
      CHECK(b.tiered.fetch(k_key, npucc::test::temp_dir("into")).status == FetchStatus::absent);
      CHECK(b.tiered.warning().find("high.onnx does not match its checksum") != std::string::npos);
    }
    SUBCASE("truncated on the server") {
      server.objects[k_key].resize(good.size() / 2);
      CHECK(b.tiered.fetch(k_key, npucc::test::temp_dir("into")).status == FetchStatus::absent);
      CHECK(b.tiered.warning().find("truncated") != std::string::npos);
    }
    CHECK(b.counter("remote.rejected") == 1);
    CHECK(b.counter("remote.hits") == 0);
    CHECK(b.local.list(Check::sizes).empty());
    CHECK(no_temporaries(b.root));
    // Repaired on the server (a later upload): the next machine hits.
    server.objects[k_key] = good;
    Machine c(server, "fake://tiered-damaged");
    fs::path into = npucc::test::temp_dir("into");
    CHECK(c.tiered.fetch(k_key, into).status == FetchStatus::hit);
    CHECK(npucc::util::read_file(into / "high.onnx") == std::string(3000, 'h'));
  }

  TEST_CASE("a transfer cut by the network is an error, not a hit, and leaves nothing behind") {
    Server server;
    Machine a(server, "fake://tiered-cut");
    a.store(k_key);
    server.cut_after = server.objects[k_key].size() - 100;
    Machine b(server, "fake://tiered-cut");
    fs::path into = npucc::test::temp_dir("into");
    CHECK(b.tiered.fetch(k_key, into).status == FetchStatus::absent);
    CHECK_FALSE(b.tiered.served_remotely());
    CHECK(b.tiered.warning().find("connection reset") != std::string::npos);
    CHECK(b.counter("remote.errors") == 1);
    CHECK(b.counter("remote.hits") == 0);
    CHECK(b.local.list(Check::sizes).empty());
    CHECK(no_temporaries(b.root));
    CHECK(fs::is_empty(into));
  }

  TEST_CASE("a failing remote warns once and is not asked again") {
    Server server;
    server.down = true;
    Machine a(server, "fake://tiered-down");
    CHECK(a.tiered.fetch(k_key, npucc::test::temp_dir("into")).status == FetchStatus::absent);
    CHECK(a.tiered.warning().find("unavailable") != std::string::npos);
    a.store(k_key); // stored locally, not uploaded: the breaker is open
    CHECK(server.gets == 1);
    CHECK(server.puts == 0);
    CHECK(a.counter("remote.errors") == 1);
    CHECK(a.local.list(Check::sizes).size() == 1);
  }

  TEST_CASE("read-only uploads nothing") {
    Server server;
    Machine a(server, "fake://tiered-read-only", true);
    a.store(k_key);
    CHECK(server.puts == 0);
    CHECK(server.objects.empty());
  }
}
