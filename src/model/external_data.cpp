#include "model/external_data.h"

#include "model/graph_walk.h"
#include "model/tensor_info.h"
#include "npucc/error.h"
#include "util/file_io.h"
#include "util/strings.h"

#include <map>
#include <unordered_set>
#include <vector>

namespace npucc::model {

namespace fs = std::filesystem;

util::Expected<fs::path> try_resolve_external_location(const std::string& location,
                                                       const fs::path& folder,
                                                       const std::string& model_file,
                                                       const std::string& tensor_name) {
  const std::string what =
      model_file + ": tensor \"" + tensor_name + "\": external data location \"" + location + "\"";
  const std::string hint = "external data files must sit in the model's folder or below it";
  if (location.empty()) {
    return Error(what + " is empty");
  }
  if (location.find('\0') != std::string::npos) {
    return Error(what + " contains a NUL byte");
  }
  fs::path relative(location);
  if (relative.is_absolute() || relative.has_root_name() || relative.has_root_directory()) {
    return Error(what + " is an absolute path", hint);
  }
  for (const auto& part : relative) {
    if (part == "..") {
      return Error(what + " leaves the model's folder (\"..\")", hint);
    }
  }
  std::error_code ec;
  fs::path base = fs::canonical(folder.empty() ? fs::path(".") : folder, ec);
  if (ec) {
    return Error(what + ": cannot resolve the model's folder: " + ec.message());
  }
  fs::path resolved = fs::canonical(base / relative, ec);
  if (ec) {
    return Error(what + ": file not found next to the model",
                 "copy the data file beside the model");
  }
  // A symlink inside the folder may still point outside it.
  auto [base_end, unused] =
      std::mismatch(base.begin(), base.end(), resolved.begin(), resolved.end());
  (void)unused;
  if (base_end != base.end()) {
    return Error(what + " resolves to " + resolved.string() + ", outside the model's folder", hint);
  }
  if (!fs::is_regular_file(resolved, ec)) {
    return Error(what + " is not a regular file");
  }
  return resolved;
}

fs::path resolve_external_location(const std::string& location, const fs::path& folder,
                                   const std::string& model_file, const std::string& tensor_name) {
  return try_resolve_external_location(location, folder, model_file, tensor_name).value();
}

namespace {

// ONNX's external_data keys of one tensor.
struct ExternalRef {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1; // -1: to the end of the file
};

ExternalRef read_external_ref(const onnx::TensorProto& tensor, const std::string& model_file) {
  ExternalRef ref;
  for (const auto& entry : tensor.external_data()) {
    int64_t number = 0;
    if (entry.key() == "location") {
      ref.location = entry.value();
    } else if (entry.key() == "offset" || entry.key() == "length") {
      if (!util::parse_int64(entry.value(), number) || number < 0) {
        throw Error(model_file + ": tensor \"" + tensor.name() + "\": external data " +
                    entry.key() + " \"" + entry.value() + "\" is not a non-negative integer");
      }
      (entry.key() == "offset" ? ref.offset : ref.length) = number;
    }
  }
  return ref;
}

// One external tensor whose range has been checked, waiting to be read.
struct Pending {
  onnx::TensorProto* tensor;
  std::shared_ptr<const util::MappedFile> map;
  fs::path path;
  std::string location;
  int64_t offset;
  uint64_t bytes;
};

// Every tensor's range is checked and counted before any is read: many tensors each
// within the limits can still sum past the memory limit, and must be refused without
// reading the first of them.
class ExternalDataPlan {
public:
  ExternalDataPlan(const fs::path& model_path, const ReadLimits& limits, uint64_t already_loaded,
                   util::InputFiles& inputs)
      : m_model_file(model_path.string()), m_folder(model_path.parent_path()), m_limits(limits),
        m_loaded(already_loaded), m_inputs(inputs) {}

  void add(onnx::TensorProto& tensor) {
    ExternalRef ref = read_external_ref(tensor, m_model_file);
    const fs::path& path = resolve(ref.location, tensor.name());
    auto& map = m_mapped[path.string()];
    if (!map) {
      // Resolved: a link in its last component now was put there since.
      map = util::MappedFile::map(m_inputs.open(path, util::InputFile::Links::refuse));
    }
    uint64_t file_size = map->bytes().size();
    uint64_t bytes =
        ref.length >= 0
            ? static_cast<uint64_t>(ref.length)
            : (static_cast<uint64_t>(ref.offset) <= file_size ? file_size - ref.offset : 0);
    check_range(tensor, ref, bytes, file_size);
    m_loaded += bytes;
    m_pending.push_back({&tensor, map, path, ref.location, ref.offset, bytes});
  }

  const std::vector<Pending>& pending() const { return m_pending; }

private:
  // Resolved once per location: a model keeps hundreds of tensors in one data file,
  // and resolving walks both paths component by component (a readlink each).
  const fs::path& resolve(const std::string& location, const std::string& tensor_name) {
    auto known = m_resolved.find(location);
    if (known == m_resolved.end()) {
      known = m_resolved
                  .emplace(location,
                           resolve_external_location(location, m_folder, m_model_file, tensor_name))
                  .first;
    }
    return known->second;
  }

  void check_range(const onnx::TensorProto& tensor, const ExternalRef& ref, uint64_t bytes,
                   uint64_t file_size) const {
    // Built only for an error: most models have hundreds of external tensors.
    auto what = [&] {
      return m_model_file + ": tensor \"" + tensor.name() + "\": external data in " + ref.location +
             " (" + std::to_string(bytes) + " bytes at offset " + std::to_string(ref.offset) + ")";
    };
    auto expected = data_bytes(tensor);
    if (expected && element_size(tensor.data_type()) != 0 && *expected != bytes) {
      throw Error(what() + " does not match its dims (" + std::to_string(*expected) + " bytes)");
    }
    if (bytes > m_limits.max_tensor_bytes) {
      throw Error(what() + " is over the per-tensor limit of " +
                  std::to_string(m_limits.max_tensor_bytes) + " bytes");
    }
    if (static_cast<uint64_t>(ref.offset) > file_size || bytes > file_size - ref.offset) {
      throw Error(what() + " runs past the end of the file (" + std::to_string(file_size) +
                      " bytes)",
                  "the data file is truncated or belongs to another model");
    }
    // Checked before reading, so an oversized model is refused without allocating.
    if (bytes > m_limits.max_memory_bytes || m_loaded > m_limits.max_memory_bytes - bytes) {
      throw Error(what() + " would bring the model's data in memory to " +
                      std::to_string(m_loaded + bytes) + " bytes, over the memory limit of " +
                      std::to_string(m_limits.max_memory_bytes) + " bytes",
                  "raise the limit with --max-memory");
    }
  }

  std::string m_model_file;
  fs::path m_folder;
  const ReadLimits& m_limits;
  uint64_t m_loaded;
  util::InputFiles& m_inputs;
  std::map<std::string, std::shared_ptr<const util::MappedFile>> m_mapped;
  std::map<std::string, fs::path> m_resolved;
  std::vector<Pending> m_pending;
};

std::unordered_set<const onnx::TensorProto*> initializers_of(onnx::ModelProto& proto) {
  std::unordered_set<const onnx::TensorProto*> initializers;
  for_each_graph(*proto.mutable_graph(), [&](onnx::GraphProto& graph, int) {
    for (const auto& tensor : graph.initializer()) {
      initializers.insert(&tensor);
    }
  });
  return initializers;
}

// Large initializers become references into `store`; everything else gets its bytes.
void read_pending(const Pending& item, bool to_store, WeightStore* store) {
  onnx::TensorProto& tensor = *item.tensor;
  if (to_store && item.bytes >= k_weight_store_threshold) {
    store->adopt_mapped(tensor, item.map, static_cast<uint64_t>(item.offset), item.bytes);
    return;
  }
  tensor.set_raw_data(
      std::string(item.map->bytes().substr(static_cast<size_t>(item.offset), item.bytes)));
  tensor.clear_external_data();
  tensor.set_data_location(onnx::TensorProto::DEFAULT);
}

} // namespace

std::vector<ExternalFile> load_external_data(onnx::ModelProto& proto, const fs::path& model_path,
                                             const ReadLimits& limits, uint64_t already_loaded,
                                             WeightStore* store, TableScope scope) {
  const std::unordered_set<const onnx::TensorProto*> initializers = initializers_of(proto);
  util::InputFiles own_inputs; // without a store, the files are the mappings' alone
  ExternalDataPlan plan(model_path, limits, already_loaded,
                        store != nullptr ? store->inputs() : own_inputs);
  for_each_tensor(*proto.mutable_graph(), [&](onnx::TensorProto& tensor) {
    if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
      plan.add(tensor);
    }
  });
  std::map<std::string, ExternalFile> files;
  for (const auto& item : plan.pending()) {
    const bool in_scope = scope == TableScope::every_tensor || initializers.count(item.tensor) != 0;
    read_pending(item, store != nullptr && in_scope, store);
    auto& file = files[item.path.string()];
    file.location = item.location;
    file.path = item.path;
    file.bytes_used += item.bytes;
  }
  std::vector<ExternalFile> result;
  for (auto& [name, file] : files) {
    result.push_back(std::move(file));
  }
  return result;
}

} // namespace npucc::model
