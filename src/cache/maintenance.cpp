// LocalStorage's maintenance: verify, invalidate, purge (eviction).
#include "cache/input_digests.h"
#include "cache/local_storage.h"
#include "npucc/version.h"
#include "util/strings.h"

#include <algorithm>
#include <ctime>
#include <fnmatch.h>
#include <functional>
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
  LayoutCheck(VerifyReport& report, Fix fix) : m_report(report), m_fix(fix) {}

  enum class Place { layout, foreign };
  void stray(const fs::path& path, const std::string& detail, Place place = Place::layout) {
    Finding finding{Finding::Kind::stray, path, detail, false};
    bool removable = place == Place::layout && path_kind(path) != PathKind::directory;
    finding.left_alone = !removable;
    if (m_fix == Fix::yes && removable) {
      Removed removed = remove_flat(path); // a symlink is removed itself, never followed
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
                          name == "models" || name == "stamps" || name == "digests";
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

  // models/<kk>/<sha256>: `valid(name)` says whether a file is one.
  void sharded_files(const fs::path& dir, const char* label,
                     const std::function<bool(const std::string&)>& valid) {
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
        if (!is_key(name) || name.substr(0, 2) != shard_name || path_kind(file) != PathKind::file ||
            !valid(name)) {
          stray(file, std::string("not a file of ") + label);
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
  if (fix == Fix::yes) {
    require_writable("verify --fix");
  }
  VerifyReport report;
  LayoutCheck layout(report, fix);
  layout.top_level(m_root);
  // tmp/ holds other processes' work in progress: purge removes what is stale.
  layout.sharded_files(m_root / "models", "models/",
                       [&](const std::string& name) { return model_index(name).has_value(); });
  layout.sharded_files(m_root / "digests", "digests/", [&](const std::string& name) {
    return is_input_digest_file(m_root / "digests" / name.substr(0, 2) / name);
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

void LocalStorage::purge_temporaries(PurgeReport& report, DryRun dry_run) const {
  int64_t stale_before = now() - k_stale_temporary_seconds;
  auto drop_temporary = [&](const fs::path& path) {
    if (dry_run == DryRun::yes) {
      ++report.temporaries;
      report.temporary_bytes += tree_bytes(path);
      return;
    }
    Removed removed = remove_flat(path);
    if (!removed.ok()) {
      report.failures.push_back(removed.error);
      return;
    }
    ++report.temporaries;
    report.temporary_bytes += removed.bytes;
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
  // Model indexes and input digests are written with AtomicFile: a killed writer leaves
  // "<sha>.tmp.*". An input digest recorded long ago is as stale: its file has most likely
  // changed or gone, and one still there is only hashed once more.
  int64_t digest_stale_before = now() - k_stale_digest_seconds;
  for (const char* layer : {"models", "digests"}) {
    if (path_kind(m_root / layer) != PathKind::directory) {
      continue;
    }
    for (const auto& shard : children(m_root / layer)) {
      if (path_kind(shard) != PathKind::directory) {
        continue; // never iterate through a planted link
      }
      for (const auto& path : children(shard)) {
        bool temporary = path.filename().string().find(".tmp.") != std::string::npos;
        if ((temporary && mtime_of(path) < stale_before) ||
            (!temporary && layer == std::string("digests") &&
             mtime_of(path) < digest_stale_before)) {
          drop_temporary(path);
        }
      }
    }
  }
}

PurgeReport LocalStorage::purge_locked(const PurgeOptions& options, DryRun dry_run) const {
  PurgeReport report;
  purge_temporaries(report, dry_run);
  for (const char* layer : {"models", "digests"}) {
    if (options.all && dry_run == DryRun::no && path_kind(m_root / layer) == PathKind::directory) {
      for (const auto& shard : children(m_root / layer)) {
        Removed removed = remove_flat(shard);
        if (!removed.ok()) {
          report.failures.push_back(removed.error);
        }
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
      Removed removed = remove_dir(entry_dir(info.key));
      if (!removed.ok()) {
        report.failures.push_back(removed.error);
        continue; // still there: neither freed nor counted
      }
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
