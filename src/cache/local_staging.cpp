// LocalStorage's temporaries in CACHE_DIR/tmp/ and the publication of an entry staged
// there by someone else (a remote tier's import): the cache's one writer also makes and
// removes what others stage in it.
#include "cache/blob_store.h"
#include "cache/local_storage.h"
#include "util/disk.h"

#include <sys/stat.h>

namespace npucc::cache {

namespace fs = std::filesystem;

TempPath::~TempPath() {
  if (!m_path.empty()) {
    remove_tree(m_path); // a leftover in tmp/ is removed by the next cleanup
  }
}

TempPath& TempPath::operator=(TempPath&& other) noexcept {
  if (this != &other) {
    if (!m_path.empty()) {
      remove_tree(m_path);
    }
    m_path = std::move(other.m_path);
    other.m_path.clear();
  }
  return *this;
}

TempPath LocalStorage::temp_name(const std::string& stem) const {
  make_dir(m_root / "tmp");
  return TempPath(unique_name(m_root / "tmp", stem));
}

TempPath LocalStorage::temp_folder(const std::string& stem) const {
  TempPath folder = temp_name(stem);
  make_dir(folder.path());
  return folder;
}

std::string LocalStorage::staged_problem(const fs::path& folder, const std::string& key) const {
  EntryInfo info = examine(folder, key, Check::sizes);
  if (info.state != EntryState::ok) {
    return info.problem.empty() ? std::string(entry_state_name(info.state)) : info.problem;
  }
  if (!info.strays.empty()) {
    return "it holds " + info.strays.front() +
           (info.strays.size() > 1 ? " and " + std::to_string(info.strays.size() - 1) + " more" : "") +
           ", which its header does not list";
  }
  return "";
}

bool LocalStorage::publish_staged(TempPath& staged, const std::string& key, Replace replace,
                                  const std::map<std::string, std::string>& sha256) {
  require_writable("store");
  // Refused whole before anything is removed, shared or published: a file its header does
  // not list would stay in the entry and in blobs/ (issue 42, finding 8).
  if (!staged_problem(staged.path(), key).empty()) {
    return false;
  }
  if (replace == Replace::yes) {
    remove(key);
  }
  fs::path entry = entry_dir(key);
  make_dir(entry.parent_path());
  // Its weights, hashed on the way in, shared with the entries that hold them already.
  std::vector<EntryFile> files;
  for (const auto& [name, digest] : sha256) {
    struct stat st {};
    if (is_plain_file_name(name) && ::lstat((staged.path() / name).c_str(), &st) == 0 &&
        S_ISREG(st.st_mode)) {
      files.push_back({name, digest, static_cast<uint64_t>(st.st_size)});
    }
  }
  share_blobs(m_root, m_modes, staged.path(), files);
  if (util::disk().rename(staged.path(), entry) != 0) {
    return path_kind(entry) == PathKind::directory;
  }
  staged.release();
  adopt_verified(key, sha256);
  return true;
}

} // namespace npucc::cache
