#include "cache/local_storage.h"

#include "cache/blob_store.h"
#include "cache/dir_handle.h"
#include "cache/entry_scan.h"
#include "cache/model_index.h"
#include "npucc/error.h"
#include "npucc/version.h"
#include "util/disk.h"
#include "util/fd.h"
#include "util/file_io.h"
#include "util/parallel.h"
#include "util/test_point.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <sys/stat.h>
#include <unistd.h>

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

void FetchResult::wait_for_files() {
  if (copying) {
    std::shared_ptr<util::BackgroundTask> task = std::move(copying);
    task->finish();
  }
}

std::string describe_transfers(const std::vector<Transfer>& transfers) {
  std::vector<std::pair<Transfer, size_t>> counts; // in order of first use
  for (Transfer transfer : transfers) {
    auto it = std::find_if(counts.begin(), counts.end(),
                           [&](const auto& count) { return count.first == transfer; });
    if (it == counts.end()) {
      counts.emplace_back(transfer, 1);
    } else {
      ++it->second;
    }
  }
  if (counts.size() == 1) {
    return transfer_name(counts[0].first);
  }
  std::string text;
  for (const auto& [transfer, n] : counts) {
    text += (text.empty() ? "" : ", ") + std::string(transfer_name(transfer)) + " (" +
            std::to_string(n) + (n == 1 ? " file)" : " files)");
  }
  return text;
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

LocalStorage open_local_storage(const CacheConfig& config, CacheIntent intent) {
  std::optional<SigningKey> key;
  if (!config.key_file.empty()) {
    key = load_signing_key(config.key_file); // before touching the cache: a bad key is fatal
  }
  CacheAccess access = intent == CacheIntent::read ? CacheAccess::read_only : config.access;
  LocalStorage storage(open_cache_dir(config, intent), access, config.sharing);
  storage.set_signing_key(std::move(key));
  storage.set_link_mode(config.link_mode);
  return storage;
}

void LocalStorage::create_layout() const {
  for (const char* sub : {"entries", "tmp", "lock", "models"}) {
    make_dir(m_root / sub);
  }
  if (path_kind(m_root / "CACHEDIR.TAG") == PathKind::missing) {
    // Readable by all who may reach the folder, whatever the writer's umask: a tag others
    // cannot read makes the folder "not an npucc cache" to them.
    util::write_file_atomic(m_root / "CACHEDIR.TAG", k_cachedir_tag, util::Durability::synced,
                            util::FileMode::exactly(0644));
  }
}

std::string LocalStorage::describe() const {
  return "local:" + m_root.string();
}

fs::path LocalStorage::entry_dir(const std::string& key) const {
  return m_root / "entries" / key.substr(0, 2) / key;
}

using util::parallel_for;

namespace {

// Walking entries' folders is system calls on small folders: worth both cores past a few
// dozen entries.
constexpr size_t k_parallel_entries = 64;

size_t entry_count(const std::vector<EntryShard>& shards) {
  size_t total = 0;
  for (const auto& shard : shards) {
    total += shard.keys.size();
  }
  return total;
}

// Calls visit(s, shard_fd) for each shard s under `entries` with its folder open (-1 when
// it is gone since it was read), one shard at a time per thread, on both cores when
// `parallel`. Entries are then looked up relative to their shard's folder.
void for_each_shard(const fs::path& entries, const std::vector<EntryShard>& shards, bool parallel,
                    const std::function<void(size_t, int)>& visit) {
  auto open_and_visit = [&](size_t s) {
    util::Fd shard_fd(::open((entries / shards[s].name).c_str(),
                             O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    visit(s, shard_fd.get());
  };
  if (parallel) {
    parallel_for(shards.size(), open_and_visit);
  } else {
    for (size_t s = 0; s < shards.size(); ++s) {
      open_and_visit(s);
    }
  }
}

// An entry found whole is of another compiler version when its header says so.
void mark_other_version(EntryInfo& info) {
  if (info.state == EntryState::ok && info.header.compiler_version != k_version) {
    info.state = EntryState::other_version;
  }
}

} // namespace

EntryInfo LocalStorage::examine(const fs::path& dir, const std::string& key, Check check) const {
  return examine_at(AT_FDCWD, dir.c_str(), dir, key, check);
}

EntryInfo LocalStorage::examine_at(int at, const char* name, const fs::path& dir,
                                   const std::string& key, Check check) const {
  std::string header_text; // the signature must cover these very bytes, not a re-read
  EntryInfo info = scan_entry(at, name, dir, key, header_text);
  auto broken = [&](EntryState state, const std::string& problem) {
    info.state = state;
    info.problem = problem;
    return std::move(info);
  };
  if (info.state != EntryState::ok) {
    return info;
  }
  if (check == Check::contents) {
    // Hashing is the cost of verify and of a first hit: the files hash on all cores.
    std::vector<std::string> problems(info.header.files.size());
    parallel_for(info.header.files.size(), [&](size_t i) {
      const auto& file = info.header.files[i];
      util::Expected<FileDigest> digest = digest_file(dir / file.name);
      if (!digest) {
        problems[i] = digest.error().what();
      } else if (digest->sha256 != file.sha256) {
        problems[i] = file.name + " does not match its checksum";
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
  if (check == Check::contents && !info.unexpected_mode.empty()) {
    return broken(EntryState::corrupt, info.unexpected_mode);
  }
  mark_other_version(info);
  return info;
}

namespace {

// An entry file's mode is part of what protects it (0444: a hard-linked output cannot be
// edited into a corrupt entry by accident): a failure to set it fails the store.
void set_entry_file_mode(const fs::path& path) {
  if (::chmod(path.c_str(), k_entry_file_mode) != 0) {
    throw Error(path.string() + ": cannot make the cache file read-only: " + std::strerror(errno));
  }
}

constexpr const char* k_stamp_magic = "npucc-verified 2\n";

// This boot of the machine. Entries are written without fsync, so what was hashed before
// a crash may not be what is on disk after it: a stamp holds only within the boot that
// wrote it. Empty when unknown (then no stamp ever matches).
const std::string& boot_id() {
  static const std::string id = [] {
    std::ifstream file("/proc/sys/kernel/random/boot_id"); // size 0 to stat: read a line
    std::string line;
    std::getline(file, line);
    return line.size() == 36 ? line : std::string();
  }();
  return id;
}

// Inode, size and mtime (ns) of each file, a line each; empty when one cannot be stat'ed.
// Given `cache_owner`, also empty when a file could be changed by someone but this user and
// the cache's owner: it is not 0444, or another user owns it (who may chmod it, write it and
// set its mtime back).
std::string files_stamp(const fs::path& dir, const std::vector<std::string>& names,
                        std::optional<uid_t> cache_owner = std::nullopt) {
  std::string out;
  for (const auto& name : names) {
    struct stat st {};
    if (::lstat((dir / name).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return "";
    }
    if (cache_owner && ((st.st_mode & 07777) != k_entry_file_mode ||
                        (st.st_uid != ::geteuid() && st.st_uid != *cache_owner))) {
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

// What the entry's files look like on disk, in this boot: inode, size and mtime (ns) of
// each. A write to a file (an edit through a hard-linked output, a truncation) or its
// replacement changes them; so while the stamp matches, the files are taken to be the
// bytes last hashed, and a hit need not hash them again (a hit then costs what hashing
// the model costs, whatever the output size). Not the ctime: hard links to the files
// come and go with every hit and every deleted output. What a stamp cannot see (bit rot,
// an mtime set back on purpose) `cache verify` finds: it always hashes. Empty when a
// file cannot be stat'ed or the boot is unknown, or when a file could have been changed
// by another user (a member who owns a file of the entry, planted or linked as a blob, can
// write it and set its mtime back): such an entry is hashed at every hit (issue 42).
std::string stat_stamp(const fs::path& dir, const EntryHeader& header, uid_t cache_owner) {
  std::vector<std::string> names{k_header_file};
  for (const auto& file : header.files) {
    names.push_back(file.name);
  }
  std::string files = files_stamp(dir, names, cache_owner);
  if (files.empty() || boot_id().empty()) {
    return "";
  }
  return k_stamp_magic + ("boot " + boot_id() + "\n") + files;
}

} // namespace

uid_t LocalStorage::owner_uid() const {
  struct stat st {};
  return ::stat(m_root.c_str(), &st) == 0 ? st.st_uid : ::geteuid(); // unknown: none but us
}

fs::path LocalStorage::stamp_path(const std::string& key) const {
  return m_root / "stamps" / key.substr(0, 2) / key;
}

bool LocalStorage::stamp_matches(const std::string& key, const std::string& stamp) const {
  fs::path path = stamp_path(key);
  if (stamp.empty() || path_kind(path) != PathKind::file) {
    return false;
  }
  util::Expected<std::string> recorded = read_small_file(path, 1 << 20);
  return recorded && *recorded == stamp; // unreadable: hashed as if there were none
}

void LocalStorage::write_stamp(const std::string& key, const std::string& stamp) const {
  if (stamp.empty() || m_access == CacheAccess::read_only) {
    return;
  }
  // Only an optimisation: when it cannot be written, the next hit hashes the files instead.
  if (!try_make_dir(m_root / "stamps") || !try_make_dir(m_root / "stamps" / key.substr(0, 2))) {
    return;
  }
  // Unsynced: an fsync right after a large entry was written waits for its data
  // (~0.1 s for 150 MB), and a stamp lost in a crash only costs a re-hash.
  // Readable by the group: a stamp another member cannot read makes them re-hash.
  util::try_write_file_atomic(stamp_path(key), stamp, util::Durability::unsynced,
                              util::FileMode::exactly(m_modes.mutable_file));
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
  write_stamp(key, stat_stamp(dir, info.header, owner_uid()));
}

// The file a hit may leave copying while the caller goes on (FetchResult::copying): the
// largest external data file (weights, which the caller does not read), when it is large
// enough for its copy to outlast the caller's own work. None with a signing key: each
// delivered file is hashed against the header as soon as it is written.
const EntryFile* LocalStorage::file_to_copy_in_background(const EntryHeader& header) const {
  constexpr uint64_t k_worth_a_thread = uint64_t{32} << 20;
  if (m_key) {
    return nullptr;
  }
  const EntryFile* largest = nullptr;
  for (const auto& file : header.files) {
    if (is_external_data_name(file.name) && file.bytes >= k_worth_a_thread &&
        (largest == nullptr || file.bytes > largest->bytes)) {
      largest = &file;
    }
  }
  return largest;
}

bool LocalStorage::deliver_files(const fs::path& dir, const EntryHeader& header,
                                 const fs::path& into, FetchResult& result) const {
  // A read-only user does not even link: that would change the cache's inodes (link
  // count, ctime) and tie the output to a cache someone else manages.
  AllowLink policy =
      m_access == CacheAccess::read_only ? AllowLink::no : link_allowed_by(m_link_mode);
  const EntryFile* in_background = file_to_copy_in_background(header);
  for (const auto& file : header.files) {
    std::unique_ptr<util::BackgroundTask> copying;
    result.transfers.push_back(materialise_file(dir / file.name, into / file.name,
                                                link_allowed_for(file.name, policy), Sync::no,
                                                &file == in_background ? &copying : nullptr));
    if (copying) {
      result.copying = std::move(copying);
    }
    if (result.transfers.back() == Transfer::hard_link) {
      std::string why = why_not_linkable(into / file.name, m_root);
      if (!why.empty()) {
        // Whoever owns a writable inode, or may chmod it, could change the user's output
        // after every check: copy it instead, and say that the entry is damaged.
        util::disk().unlink(into / file.name);
        result.transfers.back() =
            materialise_file(dir / file.name, into / file.name, AllowLink::no, Sync::no);
        result.note = "cache entry file " + file.name + " " + why +
                      ": copied, not linked (npucc cache verify reports it)";
      }
    }
    // With a key the threat is a writer swapping files between the check and the copy:
    // check what was delivered (a hard link pins the checked inode).
    if (m_key && digest_file(into / file.name).value().sha256 != file.sha256) {
      result.problem = file.name + " changed while it was fetched";
      result.status = FetchStatus::corrupt;
      result.untrusted = true;
      return false;
    }
  }
  return true;
}

namespace {

// An entry holding a file its header does not list is not used (issue 42: nobody's file
// rides along in another user's entry, and a hit delivers only what was stored): corrupt,
// as `cache verify` reports it.
void refuse_strays(EntryInfo& info) {
  if (info.state == EntryState::ok && !info.strays.empty()) {
    info.state = EntryState::corrupt;
    info.problem = "it holds " + info.strays.front() + ", which its header does not list";
  }
}

} // namespace

FetchResult LocalStorage::fetch(const std::string& key, const fs::path& into) {
  FetchResult result;
  fs::path dir = entry_dir(key);
  if (path_kind(dir) == PathKind::missing) {
    return result;
  }
  // With a signing key every hit checks the signature and the contents (a stamp could be
  // forged by whoever may write the cache); without one, a matching stamp spares the hash.
  EntryInfo info = examine(dir, key, m_key ? Check::contents : Check::sizes);
  refuse_strays(info);
  if (info.state == EntryState::ok && !m_key) {
    // Taken before hashing: a write during the hash changes the mtime, so the stamp
    // can only be older than the bytes hashed, never newer.
    std::string stamp = stat_stamp(dir, info.header, owner_uid());
    if (!stamp_matches(key, stamp)) {
      info = examine(dir, key, Check::contents);
      if (info.state == EntryState::ok) {
        write_stamp(key, stamp);
      }
    }
  }
  if (info.state == EntryState::ok) {
    try {
      if (!into.empty() && !deliver_files(dir, info.header, into, result)) {
        return result;
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

namespace {

void refuse_unsafe_names(const std::vector<std::string>& names) {
  for (const auto& name : names) {
    if (!is_plain_file_name(name) || name == k_signature_file) {
      throw Error(name + ": not a plain file name; cannot store it in the cache");
    }
  }
}

// Moves, links or copies the files `names` of `from` into the staging folder, read-only.
// For each: whether the writer's digest in `known` still stands for it. The writer's
// digests stand for files that still look as it left them: a link or a rename keeps
// inode, size and mtime; a copy counts when its source looked so before and after it.
std::vector<bool> bring_files(const fs::path& stage, const fs::path& from,
                              const std::vector<std::string>& names, SourceFiles source,
                              AllowLink link_policy, const KnownDigests& known) {
  std::vector<bool> trusted(names.size(), false);
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    fs::path target = stage / name;
    auto it = known.find(name);
    auto as_written = [&](const fs::path& path) {
      auto now = util::identify(path);
      return it != known.end() && now && *now == it->second.written_as;
    };
    bool source_as_written = as_written(from / name);
    bool moved = source == SourceFiles::move && util::disk().rename(from / name, target) == 0;
    if (moved) {
      trusted[i] = as_written(target);
    } else {
      // Not synced: an entry written since the last boot is hashed before its first
      // use after a crash (stat_stamp), so a cut-short file is found, never used.
      Transfer how = materialise_file(
          from / name, target,
          link_allowed_for(name, source == SourceFiles::link ? link_policy : AllowLink::no),
          Sync::no);
      trusted[i] = how == Transfer::hard_link ? as_written(target)
                                              : source_as_written && as_written(from / name);
    }
    set_entry_file_mode(target);
  }
  return trusted;
}

// The header's table of the staged files: the writer's digests where they stand, the
// rest hashed, on all cores.
std::vector<EntryFile> table_of(const fs::path& stage, const std::vector<std::string>& names,
                                const std::vector<bool>& trusted, const KnownDigests& known) {
  std::vector<FileDigest> digests(names.size());
  std::vector<std::string> problems(names.size());
  std::vector<size_t> unknown;
  for (size_t i = 0; i < names.size(); ++i) {
    auto now = util::identify(stage / names[i]);
    if (trusted[i] && now) {
      digests[i] = {known.at(names[i]).sha256, now->size};
    } else {
      unknown.push_back(i);
    }
  }
  parallel_for(unknown.size(), [&](size_t u) {
    size_t i = unknown[u];
    util::Expected<FileDigest> digest = digest_file(stage / names[i]);
    if (digest) {
      digests[i] = std::move(*digest);
    } else {
      problems[i] = digest.error().what(); // thrown below, on this thread
    }
  });
  std::vector<EntryFile> files;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!problems[i].empty()) {
      throw Error(problems[i]);
    }
    files.push_back({names[i], digests[i].sha256, digests[i].bytes});
  }
  return files;
}

} // namespace

void LocalStorage::write_entry_header(const fs::path& stage, const EntryHeader& header) const {
  util::AtomicFile header_file(stage / k_header_file, util::Durability::unsynced);
  header_file.write(serialize_header(header));
  header_file.commit();
  set_entry_file_mode(stage / k_header_file);
  if (m_key) {
    sign_entry(stage, *m_key);
  }
}

bool LocalStorage::publish(TempPath& stage, const std::string& key, Replace replace) const {
  fs::path target = entry_dir(key);
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (util::disk().rename(stage.path(), target) == 0) {
      stage.release();
      return true;
    }
    int error = errno;
    if (error != EEXIST && error != ENOTEMPTY && error != ENOTDIR && error != EISDIR) {
      throw Error(target.string() + ": cannot publish the cache entry: " + std::strerror(error),
                  error == ENOSPC ? "free some disk space" : "");
    }
    // Another process published first. Its entry is as good as ours unless the caller
    // found this key corrupt, or what sits there is not an entry folder at all.
    if (replace == Replace::no && path_kind(target) == PathKind::directory) {
      return false;
    }
    Removed removed = remove_dir(target);
    if (!removed.ok()) {
      throw Error(target.string() + ": cannot replace the cache entry: " + removed.error);
    }
    replace = Replace::no;
  }
  return false;
}

StoreResult LocalStorage::store(EntryHeader header, const fs::path& from,
                                const std::vector<std::string>& names, SourceFiles source,
                                Replace replace, const KnownDigests& known) {
  require_writable("store");
  refuse_unsafe_names(names);
  make_dir(m_root / "entries");
  make_dir(m_root / "entries" / header.key.substr(0, 2));
  // Renamed into place whole: this is the entry's mode.
  TempPath stage = temp_folder(header.key.substr(0, 16));
  util::test_point("store:staging");
  std::vector<bool> trusted =
      bring_files(stage.path(), from, names, source, link_allowed_by(m_link_mode), known);
  const std::string files_before = files_stamp(stage.path(), names);
  header.files = table_of(stage.path(), names, trusted, known);
  // Weights another entry holds already become links to the one copy (blob_store.h).
  share_blobs(m_root, m_modes, stage.path(), header.files);
  util::test_point("store:blobs-shared");
  StoreResult result;
  for (const auto& file : header.files) {
    result.bytes += file.bytes;
  }
  write_entry_header(stage.path(), header);
  util::test_point("store:header-written");
  // The files were hashed above (by the writer or here), and a rename keeps their
  // inodes and times: a stamp now spares the first hit the hashing, unless a file
  // changed meanwhile (a linked output is also in the user's folder).
  std::string stamp = files_stamp(stage.path(), names) == files_before
                          ? stat_stamp(stage.path(), header, owner_uid())
                          : std::string();
  if (publish(stage, header.key, replace)) {
    util::test_point("store:published");
    write_stamp(header.key, stamp);
    return result;
  }
  result.status = StoreStatus::already_present;
  return result;
}

Removed LocalStorage::remove_dir(const fs::path& dir) const {
  require_writable("remove");
  Removed out;
  // Every step relative to a folder opened here (dir_handle.h): a link planted for
  // entries/<kk> or tmp/ is refused, never followed.
  const std::string key = dir.filename().string();
  const std::string shard_name = dir.parent_path().filename().string();
  DirHandle root = DirHandle::open(m_root);
  DirHandle shard = root.child("entries").child(shard_name);
  struct stat info {};
  if (!shard.stat_of(key, info)) {
    if (!shard.valid() && path_kind(dir.parent_path()) != PathKind::missing) {
      out.error = shard.path().string() + ": not a folder (a link?); entry left alone";
    }
    return out; // removed meanwhile by someone else
  }
  DirHandle entry = shard.child(key);
  for (const auto& name : entry.names()) {
    struct stat item {};
    if (entry.stat_of(name, item) && S_ISDIR(item.st_mode)) {
      out.error = (dir / name).string() + ": a folder npucc did not write; entry left alone";
      return out;
    }
  }
  // Renamed into tmp/ first, so nobody sees a half-deleted entry.
  make_dir(m_root / "tmp");
  DirHandle tmp = root.child("tmp");
  std::string trash = unique_name(m_root / "tmp", "trash").filename().string();
  debug_pause("remove-entry");
  if (!tmp.valid() || util::disk().renameat(shard.fd(), key.c_str(), tmp.fd(), trash.c_str(),
                                            tmp.path() / trash) != 0) {
    int error = tmp.valid() ? errno : ENOTDIR;
    if (!shard.stat_of(key, info)) {
      return out; // removed meanwhile by someone else
    }
    out.error = dir.string() + ": cannot remove: " + std::strerror(error);
    return out;
  }
  return tmp.remove(trash);
}

bool LocalStorage::remove(const std::string& key) {
  fs::path dir = entry_dir(key);
  if (path_kind(dir) == PathKind::missing) {
    return false;
  }
  Removed removed = remove_dir(dir);
  if (!removed.ok()) {
    throw Error("cache entry " + key + ": " + removed.error);
  }
  return true;
}

std::optional<ModelIndex> LocalStorage::model_index(const std::string& model_sha256) const {
  constexpr uint64_t k_limit = 1 << 20;
  if (!is_key(model_sha256)) {
    return std::nullopt;
  }
  fs::path path = m_root / "models" / model_sha256.substr(0, 2) / model_sha256;
  // Its owner and mode are those of the descriptor read (issue 42: a name can be swapped
  // between a stat and an open). The lead may fold this into file_ops' safe-open helper.
  util::Fd fd(util::disk().open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0));
  struct stat info {};
  if (fd.get() < 0 || ::fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode) ||
      static_cast<uint64_t>(info.st_size) > k_limit) {
    return std::nullopt; // absent or not an index: the model is read, and the index rewritten
  }
  util::Expected<std::string> text =
      util::read_up_to(fd.get(), static_cast<size_t>(info.st_size), path);
  std::optional<ModelIndex> index = text ? parse_model_index(*text) : std::nullopt;
  if (index) {
    index->owner_uid = info.st_uid;
    index->mode = info.st_mode & 07777;
  }
  return index;
}

void LocalStorage::record_model_index(const std::string& model_sha256,
                                      const std::string& text) const {
  if (!is_key(model_sha256) || m_access == CacheAccess::read_only) {
    return;
  }
  make_dir(m_root / "models");
  fs::path shard = m_root / "models" / model_sha256.substr(0, 2);
  make_dir(shard);
  util::write_file_atomic(shard / model_sha256, text, util::Durability::synced,
                          util::FileMode::exactly(m_modes.mutable_file & ~0022u));
}

std::vector<EntryInfo> LocalStorage::list(Check check, const Progress& progress) const {
  fs::path entries = m_root / "entries";
  std::vector<EntryShard> shards = find_entry_shards(entries);
  size_t total = entry_count(shards);
  // Each shard's entries are built by the thread that examines them, into a vector of its
  // own: the memory they take is then faulted in on both cores, not up front on one.
  std::vector<std::vector<EntryInfo>> found(shards.size());
  std::mutex progress_mutex;
  size_t done = 0;
  auto examine_shard = [&](size_t s, int shard_fd) {
    const EntryShard& shard = shards[s];
    fs::path shard_path = entries / shard.name;
    std::vector<EntryInfo>& out = found[s];
    out.reserve(shard.keys.size());
    for (const auto& key : shard.keys) {
      if (shard_fd < 0) {
        // A shard gone since it was read: the full path says what became of each entry.
        out.push_back(examine(shard_path / key, key, check));
      } else if (check == Check::files) {
        out.push_back(scan_entry_files(shard_fd, key, shard_path));
        mark_other_version(out.back());
      } else {
        out.push_back(examine_at(shard_fd, key.c_str(), shard_path / key, key, check));
      }
      if (progress) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        progress(++done, total);
      }
    }
  };
  // Checking contents already hashes each entry's files on all cores.
  for_each_shard(entries, shards, check != Check::contents && total >= k_parallel_entries,
                 examine_shard);
  std::vector<EntryInfo> out;
  out.reserve(total);
  for (auto& shard_entries : found) {
    std::move(shard_entries.begin(), shard_entries.end(), std::back_inserter(out));
  }
  return out;
}

size_t LocalStorage::count_other_versions() const {
  fs::path entries = m_root / "entries";
  std::vector<EntryShard> shards = find_entry_shards(entries);
  std::atomic<size_t> count{0};
  for_each_shard(entries, shards, entry_count(shards) >= k_parallel_entries,
                 [&](size_t s, int shard_fd) {
                   if (shard_fd < 0) {
                     return; // the shard went since it was read
                   }
                   for (const auto& key : shards[s].keys) {
                     auto version = entry_compiler_version(shard_fd, key);
                     count += version && *version != k_version ? 1 : 0;
                   }
                 });
  return count;
}

} // namespace npucc::cache
