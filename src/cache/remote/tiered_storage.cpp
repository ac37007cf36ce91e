#include "cache/remote/tiered_storage.h"

#include "cache/remote/bundle.h"
#include "cache/remote/circuit_breaker.h"
#include "npucc/cache_config.h"
#include "npucc/error.h"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sys/stat.h>

namespace npucc::cache::remote {

namespace fs = std::filesystem;

namespace {

// The private scratch cache a read-only fetch makes in $TMPDIR (mkdtemp), removed whole
// when the fetch is done: npucc's own folder, outside any cache; links are not followed.
class ScratchCache {
public:
  explicit ScratchCache(fs::path path) : m_path(std::move(path)) {}
  ~ScratchCache() {
    std::error_code ec;
    fs::remove_all(m_path, ec);
  }
  ScratchCache(const ScratchCache&) = delete;
  ScratchCache& operator=(const ScratchCache&) = delete;
  const fs::path& path() const { return m_path; }

private:
  fs::path m_path;
};

} // namespace

std::vector<std::string> entry_folder_files(const fs::path& dir) {
  ParsedHeader parsed = parse_header(read_small_file(dir / k_header_file).value());
  if (parsed.problem != HeaderProblem::none) {
    throw Error((dir / k_header_file).string() + ": " + parsed.error);
  }
  std::vector<std::string> names = {k_header_file};
  for (const auto& file : parsed.header.files) {
    names.push_back(file.name);
  }
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.rfind("entry.", 0) == 0 && name != k_header_file && it->is_regular_file(ec)) {
      names.push_back(name);
    }
  }
  return names;
}

TieredStorage::TieredStorage(LocalStorage& local, const RemoteCacheConfig& config)
    : TieredStorage(local, config, make_transport(config)) {}

TieredStorage::TieredStorage(LocalStorage& local, const RemoteCacheConfig& config,
                             std::unique_ptr<Transport> transport)
    : m_local(local), m_config(config), m_transport(std::move(transport)) {}

std::string TieredStorage::describe() const {
  return m_local.describe() + ", remote:" + m_config.url +
         (m_config.read_only ? " (read-only)" : "");
}

void TieredStorage::warn(const std::string& line) {
  if (m_warning.empty()) {
    m_warning = line;
  }
}

void TieredStorage::refused(const std::string& problem) {
  m_local.stats().update({{"remote.refused_credentials", 1}});
  if (mark_remote_down(m_config.url)) {
    warn("remote cache refused the credentials: " + problem + "; compiling locally");
  }
}

void TieredStorage::fail(const std::string& problem) {
  m_local.stats().update({{"remote.errors", 1}});
  if (mark_remote_down(m_config.url)) {
    warn("remote cache unavailable, compiling locally: " + problem);
  }
}

FetchResult TieredStorage::fetch(const std::string& key, const fs::path& into) {
  m_served_remotely = false;
  FetchResult local = m_local.fetch(key, into);
  if (local.status == FetchStatus::hit || remote_is_down(m_config.url)) {
    return local;
  }
  // A read-only local cache is not written: the entry goes through a private scratch
  // cache instead, with the same checks (and the same signing key).
  std::optional<ScratchCache> scratch_root;
  std::optional<LocalStorage> scratch;
  LocalStorage* target = &m_local;
  if (m_local.read_only()) {
    std::string pattern = (fs::temp_directory_path() / "npucc-remote-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      warn("remote cache not used: cannot create a scratch folder in " +
           fs::temp_directory_path().string() + ": " + std::strerror(errno));
      return local;
    }
    scratch_root.emplace(fs::path(pattern));
    init_cache_dir(scratch_root->path());
    scratch.emplace(scratch_root->path(), CacheAccess::read_write, CacheSharing::none);
    scratch->set_signing_key(m_local.signing_key());
    target = &*scratch;
  }
  auto start = std::chrono::steady_clock::now();
  FetchStatus replaced = target == &m_local ? local.status : FetchStatus::absent;
  if (import_from_remote(*target, key, replaced) == Imported::no) {
    return local;
  }
  FetchResult imported = deliver_imported(*target, key, into);
  m_hit_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (imported.status == FetchStatus::hit) {
    return imported;
  }
  // Rejected: a local entry it replaced is gone, a read-only one is still as it was.
  return target == &m_local ? FetchResult{} : local;
}

FetchResult TieredStorage::deliver_imported(LocalStorage& target, const std::string& key,
                                            const fs::path& into) {
  FetchResult imported = target.fetch(key, into);
  if (imported.status == FetchStatus::hit) {
    m_served_remotely = true;
    m_local.stats().update({{"remote.hits", 1}});
    return imported;
  }
  // Whole and checksummed, but the local store refuses it (a bad signature, another
  // compiler version, a key that does not match): never used.
  target.remove(key);
  m_local.stats().update({{"remote.rejected", 1}});
  warn("remote cache entry " + key.substr(0, 12) + " rejected: " + imported.problem);
  return imported;
}

TieredStorage::Imported TieredStorage::import_from_remote(LocalStorage& target,
                                                          const std::string& key,
                                                          FetchStatus local_status) {
  // Becomes the entry folder: the cache's folder mode.
  TempPath stage = target.temp_folder("remote-" + key.substr(0, 16));
  BundleReceiver receiver(stage.path());
  TransferResult got = m_transport->get(key, receiver);
  m_hit_bytes = got.bytes;
  if (got.status == Status::absent) {
    m_local.stats().update({{"remote.misses", 1}});
    return Imported::no;
  }
  m_local.stats().update({{"remote.bytes_down", got.bytes}});
  // A refused bundle is the object's fault, not the network's; a cut transfer is the
  // network's (the receiver then only knows it is short).
  if (got.status == Status::refused) {
    refused(got.problem);
    return Imported::no;
  }
  if (got.status == Status::error && receiver.problem().empty()) {
    fail(got.problem);
    return Imported::no;
  }
  UnpackResult unpacked = receiver.finish();
  if (!unpacked.ok) {
    m_local.stats().update({{"remote.rejected", 1}});
    warn("remote cache entry " + key.substr(0, 12) + " rejected: " + unpacked.problem);
    return Imported::no;
  }
  // Nothing is synced: a cache entry is a cache. Damage after a crash is what the
  // checksums are for (with stamps keyed by boot id, so none outlives a crash), not a
  // reason to wait for the disk.
  // The corrupt local entry, if any, is what the remote one replaces; another process may
  // have published this key meanwhile (its entry is as good).
  // A bundle whose files its header does not list is refused whole: nothing of it is stored
  // (publish_staged would refuse it too; here it is counted and said).
  std::string problem = target.staged_problem(stage.path(), key);
  if (!problem.empty()) {
    m_local.stats().update({{"remote.rejected", 1}});
    warn("remote cache entry " + key.substr(0, 12) + " rejected: " + problem);
    return Imported::no;
  }
  Replace replace = local_status != FetchStatus::absent ? Replace::yes : Replace::no;
  return target.publish_staged(stage, key, replace, unpacked.sha256) ? Imported::yes : Imported::no;
}

StoreResult TieredStorage::store(EntryHeader header, const fs::path& from,
                                 const std::vector<std::string>& names, SourceFiles source,
                                 Replace replace, const KnownDigests& known) {
  std::string key = header.key;
  StoreResult stored = m_local.store(std::move(header), from, names, source, replace, known);
  if (!m_config.read_only && !remote_is_down(m_config.url)) {
    upload(key);
  }
  return stored;
}

void TieredStorage::upload(const std::string& key) {
  TempPath bundle = m_local.temp_name("upload-" + key.substr(0, 16) + ".bundle");
  try {
    fs::path dir = m_local.entry_dir(key);
    write_bundle(dir, entry_folder_files(dir), bundle.path());
  } catch (const Error& e) {
    // Evicted or replaced under us: nothing to upload this time.
    warn(std::string("not uploaded to the remote cache: ") + e.what());
    return;
  }
  TransferResult sent = m_transport->put(key, bundle.path());
  m_local.stats().update({{"remote.bytes_up", sent.bytes}});
  if (sent.status == Status::refused) {
    refused(sent.problem);
    return;
  }
  if (sent.status != Status::ok) {
    fail(sent.problem);
    return;
  }
  m_local.stats().update({{"remote.uploads", 1}});
}

bool TieredStorage::remove(const std::string& key) {
  return m_local.remove(key);
}

} // namespace npucc::cache::remote
