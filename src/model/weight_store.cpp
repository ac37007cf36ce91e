#include "model/weight_store.h"

#include "model/graph_walk.h"
#include "npucc/error.h"
#include "util/fd.h"

#include <atomic>
#include <mutex>
#include <unordered_map>

namespace npucc::model {

namespace {

// A location no file can have (it starts with a NUL byte, which resolve_external_location
// refuses), so a reference is never mistaken for a file on disk.
const std::string k_prefix = std::string(1, '\0') + "npucc-weight:";

struct Entry {
  uint64_t store = 0;
  std::shared_ptr<const util::MappedFile> file;
  std::string owned;
  std::string_view bytes;
  std::optional<TypedValues> typed; // bytes: empty until decoded into `owned`
};

struct Table {
  std::mutex mutex;
  std::unordered_map<uint64_t, Entry> entries;
  uint64_t next_id = 1;
};

Table& table() {
  static Table instance;
  return instance;
}

std::atomic<uint64_t> g_next_store{1};

std::optional<uint64_t> entry_id(const onnx::TensorProto& tensor) {
  if (tensor.data_location() != onnx::TensorProto::EXTERNAL) {
    return std::nullopt;
  }
  for (const auto& entry : tensor.external_data()) {
    if (entry.key() == "location" && entry.value().compare(0, k_prefix.size(), k_prefix) == 0) {
      return std::stoull(entry.value().substr(k_prefix.size()));
    }
  }
  return std::nullopt;
}

// The entry `tensor` refers to, found with the table locked through `lock`; nullptr when
// it refers to none, or to one already released.
const Entry* find_entry(const onnx::TensorProto& tensor, std::unique_lock<std::mutex>& lock) {
  auto id = entry_id(tensor);
  if (!id) {
    return nullptr;
  }
  auto& t = table();
  lock = std::unique_lock<std::mutex>(t.mutex);
  auto found = t.entries.find(*id);
  return found == t.entries.end() ? nullptr : &found->second;
}

std::optional<uint64_t> store_of(const onnx::TensorProto& tensor) {
  std::unique_lock<std::mutex> lock;
  const Entry* entry = find_entry(tensor, lock);
  return entry == nullptr ? std::nullopt : std::optional<uint64_t>(entry->store);
}

uint64_t add_entry(Entry entry) {
  auto& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  uint64_t id = t.next_id++;
  auto& stored = t.entries[id];
  stored = std::move(entry);
  if (!stored.owned.empty()) {
    stored.bytes = stored.owned;
  }
  return id;
}

void point_at(onnx::TensorProto& tensor, uint64_t id) {
  tensor.clear_raw_data();
  tensor.clear_external_data();
  tensor.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* location = tensor.add_external_data();
  location->set_key("location");
  location->set_value(k_prefix + std::to_string(id));
}

} // namespace

WeightStore::WeightStore()
    : m_store_id(g_next_store++), m_inputs(std::make_shared<util::InputFiles>()) {}

WeightStore::~WeightStore() {
  auto& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  for (auto it = t.entries.begin(); it != t.entries.end();) {
    it = it->second.store == m_store_id ? t.entries.erase(it) : std::next(it);
  }
}

void WeightStore::refer(onnx::TensorProto& tensor, uint64_t id) {
  point_at(tensor, id);
}

void WeightStore::adopt(onnx::TensorProto& tensor, std::string bytes) {
  Entry entry;
  entry.store = m_store_id;
  entry.owned = std::move(bytes);
  refer(tensor, add_entry(std::move(entry)));
}

void WeightStore::adopt_mapped(onnx::TensorProto& tensor,
                               std::shared_ptr<const util::MappedFile> file, uint64_t offset,
                               uint64_t length) {
  Entry entry;
  entry.store = m_store_id;
  entry.bytes = file->bytes().substr(offset, length);
  entry.file = std::move(file);
  refer(tensor, add_entry(std::move(entry)));
}

void WeightStore::adopt_typed(onnx::TensorProto& tensor,
                              std::shared_ptr<const util::MappedFile> file,
                              const TypedValues& values) {
  Entry entry;
  entry.store = m_store_id;
  entry.file = std::move(file);
  entry.typed = values;
  refer(tensor, add_entry(std::move(entry)));
}

void WeightStore::adopt_initializers(onnx::GraphProto& root) {
  for_each_graph(root, [&](onnx::GraphProto& graph, int) {
    for (auto& tensor : *graph.mutable_initializer()) {
      if (tensor.has_raw_data() && tensor.raw_data().size() >= k_weight_store_threshold) {
        std::string bytes;
        bytes.swap(*tensor.mutable_raw_data());
        adopt(tensor, std::move(bytes));
      }
    }
  });
}

void make_placeholder(onnx::TensorProto& tensor) {
  point_at(tensor, 0); // entries are numbered from 1
}

bool is_stored(const onnx::TensorProto& tensor) {
  return entry_id(tensor).has_value();
}

bool is_unloaded_external(const onnx::TensorProto& tensor) {
  return tensor.data_location() == onnx::TensorProto::EXTERNAL && !is_stored(tensor);
}

std::optional<std::string_view> raw_bytes(const onnx::TensorProto& tensor) {
  if (auto id = entry_id(tensor)) {
    auto& t = table();
    std::lock_guard<std::mutex> lock(t.mutex);
    auto found = t.entries.find(*id);
    if (found == t.entries.end()) {
      throw Error("tensor \"" + tensor.name() + "\": its weights were released (npucc bug)");
    }
    Entry& entry = found->second;
    if (entry.typed && entry.owned.size() != entry.typed->raw_length()) {
      entry.owned.reserve(entry.typed->raw_length());
      decode_typed_slice({entry.file, *entry.typed}, [&](std::string_view block) {
        entry.owned.append(block);
        return true;
      });
      entry.bytes = entry.owned;
    }
    return entry.bytes;
  }
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    return std::nullopt;
  }
  if (tensor.has_raw_data()) {
    return std::string_view(tensor.raw_data());
  }
  return std::nullopt;
}

std::optional<MappedSlice> mapped_slice(const onnx::TensorProto& tensor) {
  std::unique_lock<std::mutex> lock;
  const Entry* entry = find_entry(tensor, lock);
  if (entry == nullptr || !entry->file || entry->typed) {
    return std::nullopt;
  }
  auto offset = static_cast<uint64_t>(entry->bytes.data() - entry->file->bytes().data());
  return MappedSlice{entry->file, offset, entry->bytes.size()};
}

uint64_t stored_size(const onnx::TensorProto& tensor) {
  std::unique_lock<std::mutex> lock;
  const Entry* entry = find_entry(tensor, lock);
  if (entry == nullptr) {
    return 0;
  }
  return entry->typed ? entry->typed->raw_length() : entry->bytes.size();
}

std::optional<TypedSlice> typed_slice(const onnx::TensorProto& tensor) {
  std::unique_lock<std::mutex> lock;
  const Entry* entry = find_entry(tensor, lock);
  if (entry == nullptr || !entry->typed) {
    return std::nullopt;
  }
  return TypedSlice{entry->file, *entry->typed};
}

void decode_typed_slice(const TypedSlice& slice, const RawBlocks& out) {
  WireSource source(slice.file->read_fd(), slice.file->bytes().size());
  Decoded result = decode_typed(source, slice.values, &out);
  if (result != Decoded::all && result != Decoded::stopped) {
    throw Error(slice.file->path().string() + ": the file changed while it was read",
                "run again once it is written");
  }
}

void materialize(onnx::TensorProto& tensor) {
  if (!is_stored(tensor)) {
    return;
  }
  std::string bytes(*raw_bytes(tensor));
  tensor.clear_external_data();
  tensor.clear_data_location();
  tensor.set_raw_data(std::move(bytes));
}

void replace_bytes(onnx::TensorProto& tensor, std::string bytes) {
  auto store = store_of(tensor);
  if (!store || bytes.size() < k_weight_store_threshold) {
    tensor.clear_external_data();
    tensor.clear_data_location();
    tensor.set_raw_data(std::move(bytes));
    return;
  }
  Entry entry;
  entry.store = *store;
  entry.owned = std::move(bytes);
  point_at(tensor, add_entry(std::move(entry)));
}

WeightStore* weight_store(const Model& model) {
  return static_cast<WeightStore*>(model.weights.get());
}

WeightStore& ensure_weight_store(Model& model) {
  if (!model.weights) {
    model.weights = std::make_shared<WeightStore>();
  }
  return *weight_store(model);
}

std::shared_ptr<util::InputFiles> input_files(const Model& model) {
  WeightStore* store = weight_store(model);
  return store == nullptr ? nullptr : store->shared_inputs();
}

} // namespace npucc::model
