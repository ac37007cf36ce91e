// LocalStorage's maintenance: verify, invalidate, purge (eviction).
#include "cache/blob_store.h"
#include "cache/dir_handle.h"
#include "cache/input_digests.h"
#include "cache/local_storage.h"
#include "npucc/version.h"
#include "npucc/error.h"
#include "util/strings.h"

#include <algorithm>
#include <ctime>
#include <fnmatch.h>
#include <functional>
#include <optional>
#include <set>
#include <sys/stat.h>

namespace npucc::cache {

namespace fs = std::filesystem;

namespace {

int64_t now() {
  return static_cast<int64_t>(std::time(nullptr));
}

bool is_hex_pair(const std::string& name) {
  return name.size() == 2 && std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::vector<fs::path> children(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A removal waits for the cleanup lock a bounded time (stats.h), then fails in one line.
void refuse_when_busy(const DirectoryLock& lock, const std::string& what) {
  if (lock.timed_out()) {
    throw Error("cache " + what + ": " + lock.busy_text() + "; nothing removed",
                "run it again when the other process is done (NPUCC_CACHE_LOCK_TIMEOUT sets "
                "the wait, in seconds)");
  }
}

Removal removal_of(const EntryInfo& info, const std::string& why) {
  return {info.key, info.header.model, info.header.compiler_version, info.bytes, why};
}

} // namespace

const char* finding_name(Finding::Kind kind) {
  switch (kind) {
  case Finding::Kind::corrupt:
    return "corrupt";
  case Finding::Kind::truncated:
    return "truncated";
  case Finding::Kind::incomplete:
    return "incomplete";
  case Finding::Kind::foreign_version:
    return "foreign-version";
  case Finding::Kind::stray:
    return "stray";
  case Finding::Kind::unsigned_entry:
    return "unsigned";
  case Finding::Kind::bad_signature:
    return "tampered";
  }
  return "corrupt";
}

namespace {

const char* kind_name(PathKind kind) {
  return kind == PathKind::symlink     ? "a symlink"
         : kind == PathKind::directory ? "a folder"
                                       : "a file";
}

// "is a symlink, not expected in entries/": what verify found at a place of the layout.
std::string unexpected(PathKind kind, const std::string& place) {
  return std::string("is ") + kind_name(kind) + ", not expected " + place;
}

// Collects verify's findings about the layout and, with Fix::yes, removes what npucc may:
// a file or symlink at a place its layout defines. A folder where none belongs, and any
// name at the top level the layout does not define, is reported and left alone: it may
// be someone's data (a cache folder given by mistake), never npucc's to delete.
class LayoutCheck {
public:
  LayoutCheck(VerifyReport& report, Fix fix, fs::path root)
      : m_report(report), m_fix(fix), m_root(std::move(root)) {}

  enum class Place { layout, foreign };
  void stray(const fs::path& path, const std::string& detail, Place place = Place::layout) {
    Finding finding{Finding::Kind::stray, path, detail, false};
    bool removable = place == Place::layout && path_kind(path) != PathKind::directory;
    finding.left_alone = !removable;
    if (m_fix == Fix::yes && removable) {
      debug_pause("verify-stray");
      // From the cache's root, each folder opened without following a link: a symlink
      // is removed itself, never followed, and none on the way is entered.
      Removed removed = remove_within(m_root, path);
      finding.fixed = removed.ok();
      if (!removed.ok()) {
        m_report.failures.push_back(removed.error);
      }
    }
    m_report.findings.push_back(std::move(finding));
  }

  void top_level(const fs::path& root) {
    for (const auto& path : children(root)) {
      std::string name = path.filename().string();
      PathKind kind = path_kind(path);
      bool expected_dir = name == "entries" || name == "tmp" || name == "lock" ||
                          name == "models" || name == "stamps" || name == "digests" ||
                          name == "blobs";
      bool expected_file = name == "CACHEDIR.TAG" || name == "stats";
      bool transient = util::starts_with(name, "stats.tmp.") && kind == PathKind::file &&
                       mtime_of(path) > now() - k_stale_temporary_seconds;
      if ((expected_dir && kind == PathKind::directory) ||
          (expected_file && kind == PathKind::file) || transient) {
        continue;
      }
      bool ours = expected_dir || expected_file || util::starts_with(name, "stats.tmp.");
      stray(path, unexpected(kind, "in the cache folder"), ours ? Place::layout : Place::foreign);
    }
    if (path_kind(root / "lock") == PathKind::directory) {
      for (const auto& path : children(root / "lock")) {
        if (path_kind(path) != PathKind::file) {
          stray(path, unexpected(path_kind(path), "in lock/"));
        }
      }
    }
  }

  // models/<kk>/<sha256>: `problem(name)` says what is wrong with a file as one (empty:
  // nothing).
  void sharded_files(const fs::path& dir, const char* label,
                     const std::function<std::string(const std::string&)>& problem) {
    if (path_kind(dir) != PathKind::directory) {
      return;
    }
    for (const auto& shard : children(dir)) {
      std::string shard_name = shard.filename().string();
      if (!is_hex_pair(shard_name) || path_kind(shard) != PathKind::directory) {
        stray(shard, unexpected(path_kind(shard), std::string("in ") + label));
        continue;
      }
      for (const auto& file : children(shard)) {
        std::string name = file.filename().string();
        bool transient = name.find(".tmp.") != std::string::npos &&
                         mtime_of(file) > now() - k_stale_temporary_seconds;
        if (transient) {
          continue;
        }
        if (!is_key(name) || name.substr(0, 2) != shard_name || path_kind(file) != PathKind::file) {
          stray(file, std::string("not a file of ") + label);
        } else if (std::string why = problem(name); !why.empty()) {
          stray(file, why);
        }
      }
    }
  }

  // The entry folders under entries/<kk>/, for the caller to examine.
  std::vector<std::pair<fs::path, std::string>> entries(const fs::path& dir) {
    std::vector<std::pair<fs::path, std::string>> out;
    if (path_kind(dir) != PathKind::directory) {
      return out;
    }
    for (const auto& shard : children(dir)) {
      std::string shard_name = shard.filename().string();
      if (!is_hex_pair(shard_name) || path_kind(shard) != PathKind::directory) {
        stray(shard, unexpected(path_kind(shard), "in entries/"));
        continue;
      }
      for (const auto& entry : children(shard)) {
        std::string name = entry.filename().string();
        if (!is_key(name) || name.substr(0, 2) != shard_name) {
          stray(entry, unexpected(path_kind(entry), "in entries/" + shard_name));
          continue;
        }
        out.emplace_back(entry, name);
      }
    }
    return out;
  }

private:
  VerifyReport& m_report;
  Fix m_fix;
  fs::path m_root;
};

Finding::Kind finding_kind(const EntryInfo& info) {
  switch (info.state) {
  case EntryState::corrupt:
    if (info.signature == SignatureState::missing) {
      return Finding::Kind::unsigned_entry;
    }
    if (info.signature == SignatureState::mismatch) {
      return Finding::Kind::bad_signature;
    }
    return info.truncated ? Finding::Kind::truncated : Finding::Kind::corrupt;
  case EntryState::incomplete:
    return Finding::Kind::incomplete;
  case EntryState::foreign:
    return Finding::Kind::foreign_version;
  case EntryState::ok:
  case EntryState::other_version:
    break;
  }
  return Finding::Kind::corrupt;
}

} // namespace

VerifyReport LocalStorage::verify(Fix fix, const Progress& progress) const {
  std::optional<DirectoryLock> lock;
  if (fix == Fix::yes) {
    require_writable("verify --fix");
    lock.emplace(m_root, "cleanup", Wait::removal, m_modes); // one remover at a time
    refuse_when_busy(*lock, "verify --fix");
  }
  VerifyReport report;
  LayoutCheck layout(report, fix, m_root);
  layout.top_level(m_root);
  // tmp/ holds other processes' work in progress: purge removes what is stale.
  layout.sharded_files(m_root / "models", "models/",
                       [&](const std::string& name) {
                         return model_index(name) ? "" : "not a file of models/";
                       });
  layout.sharded_files(m_root / "digests", "digests/", [&](const std::string& name) {
    return input_digest_problem(m_root / "digests" / name.substr(0, 2) / name, m_key);
  });
  // A damaged blob in use shows as the entries it makes fail their checksums.
  layout.sharded_files(m_root / "blobs", "blobs/", [&](const std::string& name) {
    struct stat st {};
    bool unused = ::lstat((m_root / "blobs" / name.substr(0, 2) / name).c_str(), &st) == 0 &&
                  st.st_nlink == 1;
    return unused ? "a weight blob no entry uses" : "";
  });
  auto entries = layout.entries(m_root / "entries");
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& [dir, key] = entries[i];
    EntryInfo info = examine(dir, key, Check::contents);
    ++report.entries;
    report.bytes += info.bytes;
    if (info.state == EntryState::ok || info.state == EntryState::other_version) {
      for (const auto& name : info.strays) {
        layout.stray(dir / name, "a file the entry's header does not list");
      }
    } else {
      Finding finding{finding_kind(info), dir, info.problem, false};
      if (fix == Fix::yes) {
        Removed removed = remove_dir(dir);
        finding.fixed = removed.ok();
        if (!removed.ok()) {
          report.failures.push_back(removed.error);
        }
      }
      report.findings.push_back(std::move(finding));
    }
    if (progress) {
      progress(i + 1, entries.size());
    }
  }
  if (fix == Fix::yes) {
    // The blobs only the damaged entries just removed used: part of removing them.
    BlobSweep swept = sweep_blobs(m_root, false);
    report.failures.insert(report.failures.end(), swept.failures.begin(), swept.failures.end());
  }
  return report;
}

bool model_matches(const std::string& model, const std::string& pattern) {
  if (pattern.empty() || model == pattern) {
    return true;
  }
  const std::string suffix = ".onnx";
  bool file_name = pattern.size() > suffix.size() &&
                   pattern.compare(pattern.size() - suffix.size(), suffix.size(), suffix) == 0;
  const std::string stem = file_name ? pattern.substr(0, pattern.size() - suffix.size()) : pattern;
  return model == stem || fnmatch(stem.c_str(), model.c_str(), 0) == 0;
}

InvalidateReport LocalStorage::invalidate(const Selection& selection, DryRun dry_run) const {
  if (dry_run == DryRun::no) {
    require_writable("invalidate");
  }
  bool default_sweep =
      !selection.version && selection.model.empty() && selection.key_prefix.empty();
  InvalidateReport report;
  for (const auto& info : list(Check::sizes)) {
    bool readable = info.state == EntryState::ok || info.state == EntryState::other_version;
    if (!readable) {
      continue; // no trustworthy version or model: `cache verify --fix` handles these
    }
    const auto& header = info.header;
    if ((default_sweep && header.compiler_version == k_version) ||
        (selection.version && header.compiler_version != *selection.version) ||
        !model_matches(header.model, selection.model) ||
        (!selection.key_prefix.empty() && !util::starts_with(info.key, selection.key_prefix))) {
      continue;
    }
    if (dry_run == DryRun::no) {
      Removed removed = remove_dir(entry_dir(info.key));
      if (!removed.ok()) {
        report.failures.push_back(removed.error);
        continue; // counted only when it is really gone
      }
    }
    report.removed.push_back(removal_of(info, "compiler " + header.compiler_version));
  }
  if (dry_run == DryRun::no) {
    BlobSweep swept = sweep_blobs(m_root, false); // the weights only those entries used
    report.failures.insert(report.failures.end(), swept.failures.begin(), swept.failures.end());
  }
  if (dry_run == DryRun::no && !report.removed.empty()) {
    uint64_t bytes = 0;
    for (const auto& removal : report.removed) {
      bytes += removal.bytes;
    }
    m_stats.update({{"invalidations", report.removed.size()}, {"evicted_bytes", bytes}});
  }
  return report;
}

PurgeReport LocalStorage::purge(const PurgeOptions& options, DryRun dry_run) const {
  if (dry_run == DryRun::yes && m_access == CacheAccess::read_only) {
    return purge_locked(options, dry_run); // a lock would create a file
  }
  require_writable("purge");
  DirectoryLock lock(m_root, "cleanup", Wait::removal, m_modes);
  refuse_when_busy(lock, "purge");
  return purge_locked(options, dry_run);
}

PurgeReport LocalStorage::enforce_max_size(uint64_t max_size,
                                           const std::string& just_stored) const {
  if (m_access == CacheAccess::read_only) {
    return {};
  }
  DirectoryLock lock(m_root, "cleanup", Wait::no, m_modes);
  if (!lock.acquired()) {
    return {}; // someone else is cleaning right now
  }
  PurgeOptions options;
  options.max_size = max_size;
  options.just_stored = just_stored;
  return purge_locked(options, DryRun::no);
}

void LocalStorage::purge_temporaries(PurgeReport& report, DryRun dry_run) const {
  const int64_t stale_before = now() - k_stale_temporary_seconds;
  // Model indexes and input digests are written with AtomicFile: a killed writer leaves
  // "<sha>.tmp.*". An input digest recorded long ago is as stale: its file has most likely
  // changed or gone, and one still there is only hashed once more.
  const int64_t digest_stale_before = now() - k_stale_digest_seconds;
  DirHandle root = DirHandle::open(m_root);
  // Each folder swept is held open and each name removed relative to it (dir_handle.h);
  // one swapped while it is swept stops the purge.
  auto sweep = [&](const DirHandle& parent, const DirHandle& dir, const char* pause,
                   const std::function<bool(const std::string&, int64_t)>& stale) {
    std::vector<std::string> names = dir.names();
    debug_pause(pause);
    for (const auto& name : names) {
      struct stat info {};
      if (!dir.stat_of(name, info) || !stale(name, static_cast<int64_t>(info.st_mtime))) {
        continue;
      }
      if (&parent != &dir && !dir.still_at(parent, dir.path().filename().string())) {
        throw Error(swapped_error(dir, "purge"));
      }
      if (dry_run == DryRun::yes) {
        ++report.temporaries;
        report.temporary_bytes += dir.bytes_of(name);
        continue;
      }
      Removed removed = dir.remove(name);
      if (!removed.ok()) {
        report.failures.push_back(removed.error);
        continue;
      }
      ++report.temporaries;
      report.temporary_bytes += removed.bytes;
    }
  };
  sweep(root, root.child("tmp"), "purge-tmp",
        [&](const std::string&, int64_t mtime) { return mtime < stale_before; });
  sweep(root, root, "purge-root", [&](const std::string& name, int64_t mtime) {
    return util::starts_with(name, "stats.tmp.") && mtime < stale_before;
  });
  for (const char* layer : {"models", "digests"}) {
    DirHandle layer_dir = root.child(layer);
    for (const auto& shard : layer_dir.names()) {
      bool digests = layer == std::string("digests");
      // child(): never iterates through a planted link
      sweep(layer_dir, layer_dir.child(shard), "purge-shard",
            [&](const std::string& name, int64_t mtime) {
              bool temporary = name.find(".tmp.") != std::string::npos;
              return temporary ? mtime < stale_before : digests && mtime < digest_stale_before;
            });
    }
  }
}

PurgeReport LocalStorage::purge_locked(const PurgeOptions& options, DryRun dry_run) const {
  PurgeReport report;
  purge_temporaries(report, dry_run);
  for (const char* layer : {"models", "digests"}) {
    if (options.all && dry_run == DryRun::no) {
      DirHandle layer_dir = DirHandle::open(m_root).child(layer);
      for (const auto& shard : layer_dir.names()) {
        Removed removed = layer_dir.remove(shard);
        if (!removed.ok()) {
          report.failures.push_back(removed.error);
        }
      }
    }
  }
  std::vector<EntryInfo> entries = list(Check::sizes);
  debug_pause("evict");
  // Least recently used first, the entry just stored last; ties by key so runs are
  // reproducible.
  std::sort(entries.begin(), entries.end(), [&](const EntryInfo& a, const EntryInfo& b) {
    bool a_newest = a.key == options.just_stored;
    bool b_newest = b.key == options.just_stored;
    if (a_newest != b_newest) {
      return b_newest;
    }
    return a.last_used_ns != b.last_used_ns ? a.last_used_ns < b.last_used_ns : a.key < b.key;
  });
  SharedDiskUse use; // weights entries share count once (blob_store.h)
  for (const auto& info : entries) {
    use.add(entry_dir(info.key), info.header, info.bytes);
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    const EntryInfo& info = entries[i];
    uint64_t total = use.total();
    std::string why;
    if (options.all) {
      why = "--all";
    } else if (options.older_than && info.last_used() < now() - *options.older_than) {
      why = "unused for " + std::to_string((now() - info.last_used()) / 86400) + " day(s)";
    } else if (options.max_size && total > *options.max_size) {
      why = "over the size limit (least recently used)";
    } else {
      continue;
    }
    if (dry_run == DryRun::no) {
      Removed removed = remove_dir(entry_dir(info.key));
      if (!removed.ok()) {
        report.failures.push_back(removed.error);
        continue; // still there: neither freed nor counted
      }
    }
    report.freed += use.remove(i);
    report.removed.push_back(removal_of(info, why));
  }
  BlobSweep swept = sweep_blobs(m_root, dry_run == DryRun::yes); // after the entries that used them
  report.unused_blobs = swept.removed;
  report.unused_blob_bytes = swept.bytes;
  report.failures.insert(report.failures.end(), swept.failures.begin(), swept.failures.end());
  if (dry_run == DryRun::no) {
    m_stats.update(
        {{"evictions", report.removed.size()}, {"evicted_bytes", report.freed}, {"cleanups", 1}},
        {{"last_cleanup", static_cast<uint64_t>(now())}});
  }
  return report;
}

} // namespace npucc::cache
