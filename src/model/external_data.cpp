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

fs::path resolve_external_location(const std::string& location, const fs::path& folder,
                                   const std::string& model_file, const std::string& tensor_name) {
  const std::string what =
      model_file + ": tensor \"" + tensor_name + "\": external data location \"" + location + "\"";
  const std::string hint = "external data files must sit in the model's folder or below it";
  if (location.empty()) {
    throw Error(what + " is empty");
  }
  if (location.find('\0') != std::string::npos) {
    throw Error(what + " contains a NUL byte");
  }
  fs::path relative(location);
  if (relative.is_absolute() || relative.has_root_name() || relative.has_root_directory()) {
    throw Error(what + " is an absolute path", hint);
  }
  for (const auto& part : relative) {
    if (part == "..") {
      throw Error(what + " leaves the model's folder (\"..\")", hint);
    }
  }
  std::error_code ec;
  fs::path base = fs::canonical(folder.empty() ? fs::path(".") : folder, ec);
  if (ec) {
    throw Error(what + ": cannot resolve the model's folder: " + ec.message());
  }
  fs::path resolved = fs::canonical(base / relative, ec);
  if (ec) {
    throw Error(what + ": file not found next to the model", "copy the data file beside the model");
  }
  // A symlink inside the folder may still point outside it.
  auto [base_end, unused] =
      std::mismatch(base.begin(), base.end(), resolved.begin(), resolved.end());
  (void)unused;
  if (base_end != base.end()) {
    throw Error(what + " resolves to " + resolved.string() + ", outside the model's folder", hint);
  }
  if (!fs::is_regular_file(resolved, ec)) {
    throw Error(what + " is not a regular file");
  }
  return resolved;
}

std::vector<ExternalFile> load_external_data(onnx::ModelProto& proto, const fs::path& model_path,
                                             const ReadLimits& limits, uint64_t already_loaded,
                                             WeightStore* store) {
  const std::string model_file = model_path.string();
  const fs::path folder = model_path.parent_path();
  std::map<std::string, ExternalFile> files;
  std::map<std::string, std::shared_ptr<const util::MappedFile>> mapped;
  uint64_t loaded = already_loaded;
  std::unordered_set<const onnx::TensorProto*> initializers;
  for_each_graph(*proto.mutable_graph(), [&](onnx::GraphProto& graph, int) {
    for (const auto& tensor : graph.initializer()) {
      initializers.insert(&tensor);
    }
  });
  // Every tensor's range is checked and counted before any is read: many tensors each
  // within the limits can still sum past the memory limit, and must be refused without
  // reading the first of them.
  struct Pending {
    onnx::TensorProto* tensor;
    std::shared_ptr<const util::MappedFile> map;
    fs::path path;
    std::string location;
    int64_t offset;
    uint64_t bytes;
  };
  std::vector<Pending> pending;
  // Resolved once per location: a model keeps hundreds of tensors in one data file,
  // and resolving walks both paths component by component (a readlink each).
  std::map<std::string, fs::path> resolved;
  for_each_tensor(*proto.mutable_graph(), [&](onnx::TensorProto& tensor) {
    if (tensor.data_location() != onnx::TensorProto::EXTERNAL) {
      return;
    }
    std::string location;
    int64_t offset = 0;
    int64_t length = -1;
    for (const auto& entry : tensor.external_data()) {
      int64_t number = 0;
      if (entry.key() == "location") {
        location = entry.value();
      } else if (entry.key() == "offset" || entry.key() == "length") {
        if (!util::parse_int64(entry.value(), number) || number < 0) {
          throw Error(model_file + ": tensor \"" + tensor.name() + "\": external data " +
                      entry.key() + " \"" + entry.value() + "\" is not a non-negative integer");
        }
        (entry.key() == "offset" ? offset : length) = number;
      }
    }
    auto known = resolved.find(location);
    if (known == resolved.end()) {
      known = resolved
                  .emplace(location,
                           resolve_external_location(location, folder, model_file, tensor.name()))
                  .first;
    }
    const fs::path& path = known->second;
    auto expected = data_bytes(tensor);
    auto& map = mapped[path.string()];
    if (!map) {
      map = util::MappedFile::open(path);
    }
    uint64_t file_size = map->bytes().size();
    uint64_t bytes = length >= 0
                         ? static_cast<uint64_t>(length)
                         : (static_cast<uint64_t>(offset) <= file_size ? file_size - offset : 0);
    // Built only for an error: most models have hundreds of external tensors.
    auto what = [&] {
      return model_file + ": tensor \"" + tensor.name() + "\": external data in " + location +
             " (" + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) + ")";
    };
    if (expected && element_size(tensor.data_type()) != 0 && *expected != bytes) {
      throw Error(what() + " does not match its dims (" + std::to_string(*expected) + " bytes)");
    }
    if (bytes > limits.max_tensor_bytes) {
      throw Error(what() + " is over the per-tensor limit of " +
                  std::to_string(limits.max_tensor_bytes) + " bytes");
    }
    if (static_cast<uint64_t>(offset) > file_size || bytes > file_size - offset) {
      throw Error(what() + " runs past the end of the file (" + std::to_string(file_size) +
                      " bytes)",
                  "the data file is truncated or belongs to another model");
    }
    // Checked before reading, so an oversized model is refused without allocating.
    if (bytes > limits.max_memory_bytes || loaded > limits.max_memory_bytes - bytes) {
      throw Error(what() + " would bring the model's data in memory to " +
                      std::to_string(loaded + bytes) + " bytes, over the memory limit of " +
                      std::to_string(limits.max_memory_bytes) + " bytes",
                  "raise the limit with --max-memory");
    }
    loaded += bytes;
    pending.push_back({&tensor, map, path, location, offset, bytes});
  });
  for (const auto& item : pending) {
    onnx::TensorProto& tensor = *item.tensor;
    if (store != nullptr && initializers.count(&tensor) != 0 &&
        item.bytes >= k_weight_store_threshold) {
      store->adopt_mapped(tensor, item.map, static_cast<uint64_t>(item.offset), item.bytes);
    } else {
      tensor.set_raw_data(
          std::string(item.map->bytes().substr(static_cast<size_t>(item.offset), item.bytes)));
      tensor.clear_external_data();
      tensor.set_data_location(onnx::TensorProto::DEFAULT);
    }
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
