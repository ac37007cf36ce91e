#pragma once

// The local cache in front of a shared remote one (transport.h):
//
//   fetch  local hit: done. Otherwise ask the remote; a hit arrives as one bundle
//          (bundle.h), is unpacked into a staging folder and published into the local
//          cache as it came (entry.npucc verbatim), then read back through
//          LocalStorage::fetch, so every local check (checksums, key, signature) applies.
//          A bundle or entry that fails a check is removed, counted and not used.
//          A read-only local cache is not written: the entry is published into a private
//          scratch cache under $TMPDIR instead, checked and delivered from there.
//   store  the local store, then the published entry folder is bundled and uploaded
//          (unless read-only).
//
// A remote that fails (down, slow, refusing) gives one warning and is not asked again by
// this process (circuit_breaker.h); the caller compiles locally. Counters, in the local
// cache's stats file: remote.hits, remote.misses, remote.errors, remote.rejected,
// remote.uploads, remote.bytes_down, remote.bytes_up.
#include "cache/local_storage.h"
#include "cache/remote/transport.h"

#include <memory>

namespace npucc::cache::remote {

class TieredStorage : public Storage {
public:
  TieredStorage(LocalStorage& local, const RemoteCacheConfig& config);
  // With a given transport (tests).
  TieredStorage(LocalStorage& local, const RemoteCacheConfig& config,
                std::unique_ptr<Transport> transport);

  std::string describe() const override;
  FetchResult fetch(const std::string& key, const std::filesystem::path& into) override;
  StoreResult store(EntryHeader header, const std::filesystem::path& from,
                    const std::vector<std::string>& names, SourceFiles source, Replace replace,
                    const KnownDigests& known) override;
  bool remove(const std::string& key) override;

  // Whether the last fetch's hit came from the remote.
  bool served_remotely() const { return m_served_remotely; }
  // The last remote hit: bytes downloaded and seconds from the request to the entry
  // delivered (download, unpack, checks, materialisation).
  uint64_t hit_bytes() const { return m_hit_bytes; }
  double hit_seconds() const { return m_hit_seconds; }
  // One line when the remote failed or sent a bad entry; empty otherwise.
  const std::string& warning() const { return m_warning; }

private:
  enum class Imported { yes, no };
  Imported import_from_remote(LocalStorage& target, const std::string& key,
                              FetchStatus local_status);
  FetchResult deliver_imported(LocalStorage& target, const std::string& key,
                               const std::filesystem::path& into);
  void upload(const std::string& key);
  void fail(const std::string& problem);
  // The server refused the credentials: one warning, counted, and the remote tier is not
  // asked again in this run (as when it is down).
  void refused(const std::string& problem);
  void warn(const std::string& line);

  LocalStorage& m_local;
  RemoteCacheConfig m_config;
  std::unique_ptr<Transport> m_transport;
  bool m_served_remotely = false;
  uint64_t m_hit_bytes = 0;
  double m_hit_seconds = 0;
  std::string m_warning;
};

// The files of a published entry folder that travel: the header, the files in its
// table, and any "entry.*" companion (a signature). Throws npucc::Error.
std::vector<std::string> entry_folder_files(const std::filesystem::path& dir);

} // namespace npucc::cache::remote
