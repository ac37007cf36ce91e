// LocalStorage's maintenance: verify, invalidate, purge (eviction).
#include "cache/local_storage.h"
#include "npucc/version.h"
#include "util/strings.h"

#include <algorithm>
#include <ctime>
#include <set>

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

VerifyReport LocalStorage::verify(Fix fix, const Progress& progress) const {
  if (fix == Fix::yes) {
    require_writable("verify --fix");
  }
  VerifyReport report;
  auto stray = [&](const fs::path& path, const std::string& detail) {
    Finding finding{Finding::Kind::stray, path, detail, false};
    if (fix == Fix::yes) {
      remove_tree(path); // a symlink is removed itself, never followed
      finding.fixed = path_kind(path) == PathKind::missing;
    }
    report.findings.push_back(std::move(finding));
  };
  auto kind_name = [](PathKind kind) {
    return kind == PathKind::symlink     ? "a symlink"
           : kind == PathKind::directory ? "a folder"
                                         : "a file";
  };

  // The top level: only the layout's names, each of the right kind.
  for (const auto& path : children(m_root)) {
    std::string name = path.filename().string();
    PathKind kind = path_kind(path);
    bool expected_dir = name == "entries" || name == "tmp" || name == "lock" || name == "models" ||
                        name == "stamps";
    bool expected_file = name == "CACHEDIR.TAG" || name == "stats";
    bool transient = util::starts_with(name, "stats.tmp.") && kind == PathKind::file &&
                     mtime_of(path) > now() - k_stale_temporary_seconds;
    if ((expected_dir && kind == PathKind::directory) ||
        (expected_file && kind == PathKind::file) || transient) {
      continue;
    }
    stray(path, std::string("unexpected ") + kind_name(kind) + " in the cache folder");
  }
  if (path_kind(m_root / "lock") == PathKind::directory) {
    for (const auto& path : children(m_root / "lock")) {
      if (path_kind(path) != PathKind::file) {
        stray(path, std::string("unexpected ") + kind_name(path_kind(path)) + " in lock/");
      }
    }
  }
  // tmp/ holds other processes' work in progress: purge removes what is stale.
  if (path_kind(m_root / "models") == PathKind::directory) {
    for (const auto& shard : children(m_root / "models")) {
      std::string shard_name = shard.filename().string();
      if (!is_hex_pair(shard_name) || path_kind(shard) != PathKind::directory) {
        stray(shard, std::string("unexpected ") + kind_name(path_kind(shard)) + " in models/");
        continue;
      }
      for (const auto& file : children(shard)) {
        std::string name = file.filename().string();
        bool transient = name.find(".tmp.") != std::string::npos &&
                         mtime_of(file) > now() - k_stale_temporary_seconds;
        if (transient) {
          continue;
        }
        if (!is_key(name) || name.substr(0, 2) != shard_name || path_kind(file) != PathKind::file ||
            !model_index(name)) {
          stray(file, "not a model index");
        }
      }
    }
  }

  std::vector<std::pair<fs::path, std::string>> entries;
  if (path_kind(m_root / "entries") == PathKind::directory) {
    for (const auto& shard : children(m_root / "entries")) {
      std::string shard_name = shard.filename().string();
      if (!is_hex_pair(shard_name) || path_kind(shard) != PathKind::directory) {
        stray(shard, std::string("unexpected ") + kind_name(path_kind(shard)) + " in entries/");
        continue;
      }
      for (const auto& dir : children(shard)) {
        std::string name = dir.filename().string();
        if (!is_key(name) || name.substr(0, 2) != shard_name) {
          stray(dir, std::string("unexpected ") + kind_name(path_kind(dir)) + " in entries/" +
                         shard_name);
          continue;
        }
        entries.emplace_back(dir, name);
      }
    }
  }

  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& [dir, key] = entries[i];
    EntryInfo info = examine(dir, key, Check::contents);
    ++report.entries;
    report.bytes += info.bytes;
    Finding finding;
    finding.path = dir;
    finding.detail = info.problem;
    bool bad = true;
    switch (info.state) {
    case EntryState::ok:
    case EntryState::other_version:
      bad = false;
      break;
    case EntryState::corrupt:
      finding.kind = info.truncated ? Finding::Kind::truncated : Finding::Kind::corrupt;
      if (info.signature == SignatureState::missing) {
        finding.kind = Finding::Kind::unsigned_entry;
      } else if (info.signature == SignatureState::mismatch) {
        finding.kind = Finding::Kind::bad_signature;
      }
      break;
    case EntryState::incomplete:
      finding.kind = Finding::Kind::incomplete;
      break;
    case EntryState::foreign:
      finding.kind = Finding::Kind::foreign_version;
      break;
    }
    if (bad) {
      if (fix == Fix::yes) {
        remove_dir(dir);
        finding.fixed = path_kind(dir) == PathKind::missing;
      }
      report.findings.push_back(std::move(finding));
    } else {
      for (const auto& name : info.strays) {
        stray(dir / name, "a file the entry's header does not list");
      }
    }
    if (progress) {
      progress(i + 1, entries.size());
    }
  }
  return report;
}

std::vector<Removal> LocalStorage::invalidate(const Selection& selection, DryRun dry_run) const {
  if (dry_run == DryRun::no) {
    require_writable("invalidate");
  }
  bool default_sweep =
      !selection.version && selection.model.empty() && selection.key_prefix.empty();
  std::vector<Removal> removed;
  for (const auto& info : list(Check::sizes)) {
    bool readable = info.state == EntryState::ok || info.state == EntryState::other_version;
    if (!readable) {
      continue; // no trustworthy version or model: `cache verify --fix` handles these
    }
    const auto& header = info.header;
    if (default_sweep && header.compiler_version == k_version) {
      continue;
    }
    if (selection.version && header.compiler_version != *selection.version) {
      continue;
    }
    if (!selection.model.empty() && header.model != selection.model) {
      continue;
    }
    if (!selection.key_prefix.empty() && !util::starts_with(info.key, selection.key_prefix)) {
      continue;
    }
    if (dry_run == DryRun::no) {
      remove_dir(entry_dir(info.key));
    }
    removed.push_back(removal_of(info, "compiler " + header.compiler_version));
  }
  if (dry_run == DryRun::no && !removed.empty()) {
    uint64_t bytes = 0;
    for (const auto& removal : removed) {
      bytes += removal.bytes;
    }
    m_stats.update({{"invalidations", removed.size()}, {"evicted_bytes", bytes}});
  }
  return removed;
}

PurgeReport LocalStorage::purge(const PurgeOptions& options, DryRun dry_run) const {
  if (dry_run == DryRun::yes && m_access == CacheAccess::read_only) {
    return purge_locked(options, dry_run); // a lock would create a file
  }
  require_writable("purge");
  DirectoryLock lock(m_root, "cleanup", Wait::yes, m_modes);
  return purge_locked(options, dry_run);
}

PurgeReport LocalStorage::enforce_max_size(uint64_t max_size) const {
  if (m_access == CacheAccess::read_only) {
    return {};
  }
  DirectoryLock lock(m_root, "cleanup", Wait::no, m_modes);
  if (!lock.acquired()) {
    return {}; // someone else is cleaning right now
  }
  PurgeOptions options;
  options.max_size = max_size;
  return purge_locked(options, DryRun::no);
}

PurgeReport LocalStorage::purge_locked(const PurgeOptions& options, DryRun dry_run) const {
  PurgeReport report;
  int64_t stale_before = now() - k_stale_temporary_seconds;
  auto drop_temporary = [&](const fs::path& path) {
    ++report.temporaries;
    report.temporary_bytes += dry_run == DryRun::yes ? tree_bytes(path) : remove_tree(path);
  };
  if (path_kind(m_root / "tmp") == PathKind::directory) {
    for (const auto& path : children(m_root / "tmp")) {
      if (mtime_of(path) < stale_before) {
        drop_temporary(path);
      }
    }
  }
  for (const auto& path : children(m_root)) {
    if (util::starts_with(path.filename().string(), "stats.tmp.") &&
        mtime_of(path) < stale_before) {
      drop_temporary(path);
    }
  }
  // Model indexes are written with AtomicFile: a killed writer leaves "<sha>.tmp.*".
  if (path_kind(m_root / "models") == PathKind::directory) {
    for (const auto& shard : children(m_root / "models")) {
      if (path_kind(shard) != PathKind::directory) {
        continue; // never iterate through a planted link
      }
      for (const auto& path : children(shard)) {
        if (path.filename().string().find(".tmp.") != std::string::npos &&
            mtime_of(path) < stale_before) {
          drop_temporary(path);
        }
      }
    }
  }

  if (options.all && path_kind(m_root / "models") == PathKind::directory) {
    for (const auto& shard : children(m_root / "models")) {
      if (dry_run == DryRun::no) {
        remove_tree(shard);
      }
    }
  }
  std::vector<EntryInfo> entries = list(Check::sizes);
  // Least recently used first; ties by key so runs are reproducible.
  std::sort(entries.begin(), entries.end(), [](const EntryInfo& a, const EntryInfo& b) {
    return a.last_used != b.last_used ? a.last_used < b.last_used : a.key < b.key;
  });
  uint64_t total = 0;
  for (const auto& info : entries) {
    total += info.bytes;
  }
  for (const auto& info : entries) {
    std::string why;
    if (options.all) {
      why = "--all";
    } else if (options.older_than && info.last_used < now() - *options.older_than) {
      why = "unused for " + std::to_string((now() - info.last_used) / 86400) + " day(s)";
    } else if (options.max_size && total > *options.max_size) {
      why = "over the size limit (least recently used)";
    } else {
      continue;
    }
    if (dry_run == DryRun::no) {
      remove_dir(entry_dir(info.key));
    }
    total -= info.bytes;
    report.freed += info.bytes;
    report.removed.push_back(removal_of(info, why));
  }
  if (dry_run == DryRun::no) {
    m_stats.update(
        {{"evictions", report.removed.size()}, {"evicted_bytes", report.freed}, {"cleanups", 1}},
        {{"last_cleanup", static_cast<uint64_t>(now())}});
  }
  return report;
}

} // namespace npucc::cache
