#include "accuracy/sample_walk.h"

#include "npucc/error.h"

#include <algorithm>
#include <map>

namespace npucc::accuracy {

namespace fs = std::filesystem;

namespace {

const char* const k_layouts =
    "give a .npz, a folder of test_data_set_*/input_*.pb, a folder of .npz files, a folder of "
    ".npy files named after the model's inputs, or a folder of such set folders";

std::vector<fs::path> sorted_entries(const fs::path& folder) {
  std::vector<fs::path> entries;
  std::error_code error;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    entries.push_back(it->path());
  }
  if (error) {
    throw Error(folder.string() + ": cannot list the folder: " + error.message());
  }
  std::sort(entries.begin(), entries.end());
  return entries;
}

// Regular files and folders through links (fs::is_* follow them), as reading does.
bool is_file_with(const fs::path& path, const char* suffix) {
  std::error_code error;
  return path.extension() == suffix && fs::is_regular_file(path, error);
}

bool is_folder(const fs::path& path) {
  std::error_code error;
  return fs::is_directory(path, error);
}

// Walks one PATH, naming files relative to it.
class PathWalk {
public:
  PathWalk(const fs::path& root, std::vector<SampleSetFiles>& sets) : m_root(root), m_sets(sets) {}

  void add(const fs::path& source, SetLayout layout, const std::vector<fs::path>& files) {
    SampleSetFiles set;
    set.source = source.string();
    set.layout = layout;
    for (const auto& file : files) {
      std::error_code error;
      const auto size = fs::file_size(file, error);
      set.bytes += error ? 0 : size;
      set.names.push_back(file == m_root ? file.filename().string()
                                         : file.lexically_relative(m_root).string());
      set.files.push_back(file);
    }
    m_sets.push_back(std::move(set));
  }

  // input_*.pb of a folder, by index; whether there were any. A test_data_set_* folder is a
  // set even when it holds none (reading it then says which input it lacks).
  bool add_tensor_protos(const fs::path& folder, const std::vector<fs::path>& entries,
                         bool even_empty = false) {
    std::map<int64_t, fs::path> files;
    for (const auto& entry : entries) {
      if (int64_t index = tensor_proto_index(entry); index >= 0 && is_file_with(entry, ".pb")) {
        files[index] = entry;
      }
    }
    std::vector<fs::path> ordered;
    for (auto& [index, file] : files) {
      ordered.push_back(file);
    }
    if (!ordered.empty() || even_empty) {
      add(folder, SetLayout::tensor_protos, ordered);
    }
    return !ordered.empty();
  }

  bool add_npy_folder(const fs::path& folder, const std::vector<fs::path>& entries) {
    std::vector<fs::path> files;
    std::copy_if(entries.begin(), entries.end(), std::back_inserter(files),
                 [](const fs::path& entry) { return is_file_with(entry, ".npy"); });
    if (!files.empty()) {
      add(folder, SetLayout::npy_folder, files);
    }
    return !files.empty();
  }

  // A set folder of layout 6: .npy files or input_*.pb, nothing deeper.
  void add_set_folder(const fs::path& folder) {
    const auto entries = sorted_entries(folder);
    if (!add_tensor_protos(folder, entries)) {
      add_npy_folder(folder, entries);
    }
  }

  void walk_folder(const fs::path& folder);

private:
  const fs::path& m_root;
  std::vector<SampleSetFiles>& m_sets;
};

bool is_hidden_entry(const fs::path& entry) { return entry.filename().string().rfind('.', 0) == 0; }

void PathWalk::walk_folder(const fs::path& folder) {
  const auto entries = sorted_entries(folder);
  const size_t before = m_sets.size();
  for (const auto& entry : entries) {
    if (is_folder(entry) && entry.filename().string().rfind("test_data_set_", 0) == 0) {
      add_tensor_protos(entry, sorted_entries(entry), true);
    }
  }
  if (m_sets.size() == before && !add_tensor_protos(folder, entries)) {
    for (const auto& entry : entries) {
      if (is_file_with(entry, ".npz")) {
        add(entry, SetLayout::npz, {entry});
      }
    }
  }
  if (m_sets.size() == before && !add_npy_folder(folder, entries)) {
    for (const auto& entry : entries) {
      if (is_folder(entry) && !is_hidden_entry(entry)) {
        add_set_folder(entry);
      }
    }
  }
}

} // namespace

int64_t tensor_proto_index(const fs::path& file) {
  const std::string name = file.filename().string();
  if (name.rfind("input_", 0) != 0 || file.extension() != ".pb") {
    return -1;
  }
  const std::string digits = name.substr(6, name.size() - 9);
  if (digits.empty() || digits.size() > 9 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    return -1;
  }
  return std::stoll(digits);
}

std::vector<SampleSetFiles> walk_samples(const std::vector<fs::path>& paths,
                                         const std::string& option) {
  std::vector<SampleSetFiles> sets;
  for (const auto& path : paths) {
    PathWalk walk(path, sets);
    const size_t before = sets.size();
    if (is_file_with(path, ".npz")) {
      walk.add(path, SetLayout::npz, {path});
      continue;
    }
    if (!is_folder(path)) {
      std::error_code error;
      throw Error(option + " " + path.string() + ": " +
                      (fs::exists(path, error) ? "not a folder or a .npz file"
                                               : "no such file or folder"),
                  k_layouts);
    }
    walk.walk_folder(path);
    if (sets.size() == before) {
      throw Error(option + " " + path.string() + ": no samples in the folder", k_layouts);
    }
  }
  return sets;
}

} // namespace npucc::accuracy
