#include "cache/local_storage.h"

#include "cache/cache_key.h"
#include "npucc/error.h"
#include "npucc/version.h"
#include "util/file_io.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <sys/stat.h>
#include <thread>

namespace npucc::cache {

namespace fs = std::filesystem;

const char* entry_state_name(EntryState state) {
  switch (state) {
  case EntryState::ok:
    return "ok";
  case EntryState::other_version:
    return "other-version";
  case EntryState::corrupt:
    return "corrupt";
  case EntryState::incomplete:
    return "incomplete";
  case EntryState::foreign:
    return "foreign";
  }
  return "corrupt";
}

const char* fetch_status_name(FetchStatus status) {
  switch (status) {
  case FetchStatus::hit:
    return "hit";
  case FetchStatus::absent:
    return "absent";
  case FetchStatus::corrupt:
    return "corrupt";
  case FetchStatus::incomplete:
    return "incomplete";
  }
  return "absent";
}

LocalStorage::LocalStorage(fs::path root, CacheAccess access, CacheSharing sharing)
    : m_root(std::move(root)), m_access(access), m_sharing(resolve_sharing(sharing, m_root)),
      m_modes(modes_for(m_sharing)), m_stats(m_root, m_modes, access) {}

void LocalStorage::require_writable(const std::string& what) const {
  if (m_access == CacheAccess::read_only) {
    throw Error("cache " + what + ": " + m_root.string() + " is used read-only; nothing changed",
                "drop --read-only (NPUCC_CACHE_READ_ONLY, cache.read_only in config.toml) to "
                "modify the cache");
  }
}

LocalStorage open_local_storage(const CacheConfig& config) {
  std::optional<SigningKey> key;
  if (!config.key_file.empty()) {
    key = load_signing_key(config.key_file); // before touching the cache: a bad key is fatal
  }
  LocalStorage storage(open_cache_dir(config), config.access, config.sharing);
  storage.set_signing_key(std::move(key));
  return storage;
}

std::string LocalStorage::describe() const {
  return "local:" + m_root.string();
}

fs::path LocalStorage::entry_dir(const std::string& key) const {
  return m_root / "entries" / key.substr(0, 2) / key;
}

namespace {

// Runs work(0..count-1) on up to one thread per core; work must not throw.
void parallel_for(size_t count, const std::function<void(size_t)>& work) {
  size_t threads = std::min<size_t>(count, std::max(1u, std::thread::hardware_concurrency()));
  if (threads <= 1) {
    for (size_t i = 0; i < count; ++i) {
      work(i);
    }
    return;
  }
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < count; i = next++) {
      work(i);
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) {
    pool.emplace_back(worker);
  }
  worker();
  for (auto& thread : pool) {
    thread.join();
  }
}

} // namespace

EntryInfo LocalStorage::examine(const fs::path& dir, const std::string& key, Check check) const {
  EntryInfo info;
  info.key = key;
  info.dir = dir;
  auto broken = [&](EntryState state, const std::string& problem) {
    info.state = state;
    info.problem = problem;
    return info;
  };
  // `cache ls` examines every entry: one lstat per name, reused below, keeps it to a
  // few system calls per entry.
  struct stat dir_stat {};
  if (::lstat(dir.c_str(), &dir_stat) != 0) {
    return broken(EntryState::corrupt, "the entry is not a folder");
  }
  info.last_used = static_cast<int64_t>(dir_stat.st_mtim.tv_sec);
  if (S_ISLNK(dir_stat.st_mode)) {
    return broken(EntryState::corrupt, "the entry is a symlink");
  }
  if (!S_ISDIR(dir_stat.st_mode)) {
    return broken(EntryState::corrupt, "the entry is not a folder");
  }
  std::error_code ec;
  std::vector<std::string> names;
  std::map<std::string, struct stat> stats;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) == 0) {
      stats[name] = st;
      info.bytes += S_ISREG(st.st_mode)   ? static_cast<uint64_t>(st.st_size)
                    : S_ISDIR(st.st_mode) ? tree_bytes(it->path())
                                          : 0;
    }
    names.push_back(std::move(name));
  }
  fs::path header_path = dir / k_header_file;
  if (stats.count(k_header_file) == 0) {
    return broken(EntryState::incomplete, std::string(k_header_file) + " is missing");
  }
  ParsedHeader parsed;
  std::string header_text; // the signature must cover these very bytes, not a re-read
  try {
    header_text = read_small_file(header_path);
    parsed = parse_header(header_text);
  } catch (const Error& e) {
    return broken(EntryState::corrupt, e.what());
  }
  if (parsed.problem == HeaderProblem::foreign_format) {
    return broken(EntryState::foreign, parsed.error);
  }
  if (parsed.problem != HeaderProblem::none) {
    return broken(EntryState::corrupt, parsed.error);
  }
  info.header = std::move(parsed.header);
  for (const auto& name : names) {
    bool listed = name == k_header_file || name == k_signature_file;
    for (const auto& file : info.header.files) {
      listed = listed || file.name == name;
    }
    if (!listed) {
      info.strays.push_back(name);
    }
  }
  if (info.header.key != key) {
    return broken(EntryState::corrupt, "the header's key does not match the entry's folder");
  }
  for (const auto& file : info.header.files) {
    auto found = stats.find(file.name);
    if (found == stats.end()) {
      return broken(EntryState::incomplete, file.name + " is missing");
    }
    const struct stat& st = found->second;
    if (!S_ISREG(st.st_mode)) {
      return broken(EntryState::corrupt, file.name + " is not a regular file");
    }
    uint64_t size = static_cast<uint64_t>(st.st_size);
    if (size != file.bytes) {
      info.truncated = size < file.bytes;
      return broken(EntryState::corrupt,
                    file.name + " has " + std::to_string(size) + " bytes, the header records " +
                        std::to_string(file.bytes) + (info.truncated ? " (truncated)" : ""));
    }
  }
  if (check == Check::contents) {
    // Hashing is the cost of verify and of a first hit: the files hash on all cores.
    std::vector<std::string> problems(info.header.files.size());
    parallel_for(info.header.files.size(), [&](size_t i) {
      const auto& file = info.header.files[i];
      try {
        if (digest_file(dir / file.name).sha256 != file.sha256) {
          problems[i] = file.name + " does not match its checksum";
        }
      } catch (const Error& e) {
        problems[i] = e.what();
      }
    });
    for (const auto& problem : problems) {
      if (!problem.empty()) {
        return broken(EntryState::corrupt, problem);
      }
    }
  }
  if (check == Check::contents && m_key) {
    SignatureCheck signature = check_entry_signature(dir, *m_key, header_text);
    info.signature = signature.state;
    if (signature.state != SignatureState::valid) {
      return broken(EntryState::corrupt, signature.problem);
    }
  }
  if (info.header.compiler_version != k_version) {
    info.state = EntryState::other_version;
  }
  return info;
}

namespace {

constexpr const char* k_stamp_magic = "npucc-verified 1\n";

// What the entry's files look like on disk: inode, size and mtime (ns) of each. A write
// to a file (an edit through a hard-linked output, a truncation) or its replacement
// changes them; so while the stamp matches, the files are taken to be the bytes last
// hashed, and a hit need not hash them again (a hit then costs what hashing the model
// costs, whatever the output size). Not the ctime: hard links to the files come and go
// with every hit and every deleted output. What a stamp cannot see (bit rot, an mtime
// set back on purpose) `cache verify` finds: it always hashes. Empty when a file cannot
// be stat'ed.
std::string stat_stamp(const fs::path& dir, const EntryHeader& header) {
  std::string out = k_stamp_magic;
  std::vector<std::string> names{k_header_file};
  for (const auto& file : header.files) {
    names.push_back(file.name);
  }
  for (const auto& name : names) {
    struct stat st {};
    if (::lstat((dir / name).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return "";
    }
    char line[256];
    std::snprintf(line, sizeof line, "%llu %llu %lld.%09ld ",
                  static_cast<unsigned long long>(st.st_ino),
                  static_cast<unsigned long long>(st.st_size),
                  static_cast<long long>(st.st_mtim.tv_sec), st.st_mtim.tv_nsec);
    out += line + name + "\n";
  }
  return out;
}

} // namespace

fs::path LocalStorage::stamp_path(const std::string& key) const {
  return m_root / "stamps" / key.substr(0, 2) / key;
}

bool LocalStorage::stamp_matches(const std::string& key, const std::string& stamp) const {
  fs::path path = stamp_path(key);
  if (stamp.empty() || path_kind(path) != PathKind::file) {
    return false;
  }
  try {
    return read_small_file(path, 1 << 20) == stamp;
  } catch (const Error&) {
    return false;
  }
}

void LocalStorage::write_stamp(const std::string& key, const std::string& stamp) const {
  if (stamp.empty() || m_access == CacheAccess::read_only) {
    return;
  }
  try {
    ensure_real_directory(m_root / "stamps");
    ensure_real_directory(m_root / "stamps" / key.substr(0, 2));
    // Unsynced: an fsync right after a large entry was written waits for its data
    // (~0.1 s for 150 MB), and a stamp lost in a crash only costs a re-hash.
    util::write_file_atomic(stamp_path(key), stamp, util::Durability::unsynced);
  } catch (const Error&) {
    // Only an optimisation: the next hit hashes the files instead.
  }
}

void LocalStorage::adopt_verified(const std::string& key,
                                  const std::map<std::string, std::string>& sha256) {
  fs::path dir = entry_dir(key);
  EntryInfo info = examine(dir, key, Check::sizes);
  if (info.state != EntryState::ok) {
    return;
  }
  for (const auto& file : info.header.files) {
    auto it = sha256.find(file.name);
    if (it == sha256.end() || it->second != file.sha256) {
      return; // the next fetch hashes and judges
    }
  }
  write_stamp(key, stat_stamp(dir, info.header));
}

FetchResult LocalStorage::fetch(const std::string& key, const fs::path& into) {
  FetchResult result;
  fs::path dir = entry_dir(key);
  if (path_kind(dir) == PathKind::missing) {
    return result;
  }
  // With a signing key every hit checks the signature and the contents (a stamp could be
  // forged by whoever may write the cache); without one, a matching stamp spares the hash.
  EntryInfo info = examine(dir, key, m_key ? Check::contents : Check::sizes);
  if (info.state == EntryState::ok && !m_key) {
    // Taken before hashing: a write during the hash changes the mtime, so the stamp
    // can only be older than the bytes hashed, never newer.
    std::string stamp = stat_stamp(dir, info.header);
    if (!stamp_matches(key, stamp)) {
      info = examine(dir, key, Check::contents);
      if (info.state == EntryState::ok) {
        write_stamp(key, stamp);
      }
    }
  }
  if (info.state == EntryState::ok) {
    try {
      for (const auto& file : info.header.files) {
        // A read-only user does not even link: that would change the cache's inodes
        // (link count, ctime) and tie the output to a cache someone else manages.
        result.transfer = materialise_file(
            dir / file.name, into / file.name,
            m_access == CacheAccess::read_only ? AllowLink::no : AllowLink::yes, Sync::no);
        // With a key the threat is a writer swapping files between the check and the
        // copy: check what was delivered (a hard link pins the checked inode).
        if (m_key && digest_file(into / file.name).sha256 != file.sha256) {
          result.problem = file.name + " changed while it was fetched";
          result.status = FetchStatus::corrupt;
          result.untrusted = true;
          return result;
        }
      }
    } catch (const Error& e) {
      // Removed under us (eviction, a concurrent replace): a miss, not a failure.
      if (path_kind(dir) != PathKind::directory) {
        return result;
      }
      throw;
    }
    if (m_access == CacheAccess::read_write) {
      touch(dir); // last use, for eviction
    }
    result.status = FetchStatus::hit;
    result.header = std::move(info.header);
    return result;
  }
  result.status =
      info.state == EntryState::incomplete ? FetchStatus::incomplete : FetchStatus::corrupt;
  // An entry of another version under this key can only be a forged or damaged one:
  // the version is part of the key.
  result.problem = info.state == EntryState::other_version ? "written by another compiler version"
                                                           : info.problem;
  result.untrusted = info.signature && *info.signature != SignatureState::valid;
  return result;
}

StoreResult LocalStorage::store(EntryHeader header, const fs::path& from,
                                const std::vector<std::string>& names, SourceFiles source,
                                Replace replace) {
  require_writable("store");
  for (const auto& name : names) {
    if (!is_plain_file_name(name) || name == k_signature_file) {
      throw Error(name + ": not a plain file name; cannot store it in the cache");
    }
  }
  ensure_real_directory(m_root / "tmp", m_modes.dir);
  ensure_real_directory(m_root / "entries", m_modes.dir);
  ensure_real_directory(m_root / "entries" / header.key.substr(0, 2), m_modes.dir);
  fs::path stage = unique_name(m_root / "tmp", header.key.substr(0, 16));
  if (::mkdir(stage.c_str(), 0700) != 0) {
    throw Error(stage.string() + ": cannot create a staging folder: " + std::strerror(errno));
  }
  ::chmod(stage.c_str(), m_modes.dir); // renamed into place whole: this is the entry's mode
  StoreResult result;
  try {
    header.files.clear();
    for (const auto& name : names) {
      fs::path target = stage / name;
      bool moved =
          source == SourceFiles::move && ::rename((from / name).c_str(), target.c_str()) == 0;
      if (!moved) {
        materialise_file(from / name, target, AllowLink::no, Sync::yes);
      }
      ::chmod(target.c_str(), k_entry_file_mode);
    }
    std::vector<FileDigest> digests(names.size());
    std::vector<std::string> problems(names.size());
    parallel_for(names.size(), [&](size_t i) {
      try {
        digests[i] = digest_file(stage / names[i]);
      } catch (const Error& e) {
        problems[i] = e.what();
      }
    });
    for (size_t i = 0; i < names.size(); ++i) {
      if (!problems[i].empty()) {
        throw Error(problems[i]);
      }
      header.files.push_back({names[i], digests[i].sha256, digests[i].bytes});
      result.bytes += digests[i].bytes;
    }
    util::AtomicFile header_file(stage / k_header_file);
    header_file.write(serialize_header(header));
    header_file.commit();
    ::chmod((stage / k_header_file).c_str(), k_entry_file_mode);
    if (m_key) {
      sign_entry(stage, *m_key);
    }
    sync_directory(stage);
    // The files were hashed above, in a folder only this process knows, and a rename
    // keeps their inodes and times: a stamp now spares the first hit the hashing.
    std::string stamp = stat_stamp(stage, header);

    fs::path target = entry_dir(header.key);
    for (int attempt = 0; attempt < 3; ++attempt) {
      if (::rename(stage.c_str(), target.c_str()) == 0) {
        sync_directory(target.parent_path());
        write_stamp(header.key, stamp);
        return result;
      }
      int error = errno;
      if (error != EEXIST && error != ENOTEMPTY && error != ENOTDIR && error != EISDIR) {
        throw Error(target.string() + ": cannot publish the cache entry: " + std::strerror(error),
                    error == ENOSPC ? "free some disk space" : "");
      }
      // Another process published first. Its entry is as good as ours unless the caller
      // found this key corrupt, or what sits there is not an entry folder at all.
      if (replace == Replace::no && path_kind(target) == PathKind::directory) {
        break;
      }
      remove_dir(target);
      replace = Replace::no;
    }
  } catch (...) {
    remove_tree(stage);
    throw;
  }
  remove_tree(stage);
  result.status = StoreStatus::already_present;
  return result;
}

void LocalStorage::remove_dir(const fs::path& dir) const {
  require_writable("remove");
  // Renamed into tmp/ first, so nobody sees a half-deleted entry.
  ensure_real_directory(m_root / "tmp", m_modes.dir);
  fs::path trash = unique_name(m_root / "tmp", "trash");
  if (::rename(dir.c_str(), trash.c_str()) != 0) {
    if (path_kind(dir) == PathKind::missing) {
      return;
    }
    remove_tree(dir);
    return;
  }
  remove_tree(trash);
}

bool LocalStorage::remove(const std::string& key) {
  fs::path dir = entry_dir(key);
  if (path_kind(dir) == PathKind::missing) {
    return false;
  }
  remove_dir(dir);
  return true;
}

std::optional<std::vector<std::string>>
LocalStorage::model_index(const std::string& model_sha256) const {
  fs::path path = m_root / "models" / model_sha256.substr(0, 2) / model_sha256;
  if (!is_key(model_sha256) || path_kind(path) != PathKind::file) {
    return std::nullopt;
  }
  try {
    return parse_model_index(read_small_file(path, 1 << 20));
  } catch (const Error&) {
    return std::nullopt;
  }
}

void LocalStorage::record_model_index(const std::string& model_sha256,
                                      const std::string& text) const {
  if (!is_key(model_sha256) || m_access == CacheAccess::read_only) {
    return;
  }
  ensure_real_directory(m_root / "models", m_modes.dir);
  fs::path shard = m_root / "models" / model_sha256.substr(0, 2);
  ensure_real_directory(shard, m_modes.dir);
  util::write_file_atomic(shard / model_sha256, text);
  ::chmod((shard / model_sha256).c_str(), m_modes.mutable_file);
}

std::vector<EntryInfo> LocalStorage::list(Check check, const Progress& progress) const {
  std::vector<std::pair<fs::path, std::string>> dirs;
  fs::path entries = m_root / "entries";
  if (path_kind(entries) != PathKind::directory) {
    return {};
  }
  std::error_code ec;
  for (fs::directory_iterator it(entries, ec), end; !ec && it != end; it.increment(ec)) {
    if (path_kind(it->path()) != PathKind::directory) {
      continue;
    }
    std::error_code inner;
    for (fs::directory_iterator entry(it->path(), inner), stop; !inner && entry != stop;
         entry.increment(inner)) {
      std::string name = entry->path().filename().string();
      if (is_key(name) && name.substr(0, 2) == it->path().filename().string()) {
        dirs.emplace_back(entry->path(), name);
      }
    }
  }
  std::sort(dirs.begin(), dirs.end());
  std::vector<EntryInfo> out;
  for (size_t i = 0; i < dirs.size(); ++i) {
    out.push_back(examine(dirs[i].first, dirs[i].second, check));
    if (progress) {
      progress(i + 1, dirs.size());
    }
  }
  return out;
}

} // namespace npucc::cache
