#include "output/external_data_writer.h"

#include "model/graph_walk.h"
#include "model/weight_store.h"

#include <utility>

namespace npucc::output {

namespace fs = std::filesystem;

DataFileWriter::DataFileWriter(const fs::path& folder, std::string name, WriteControl* control)
    : m_file(folder / name, control), m_name(std::move(name)) {}

void DataFileWriter::align() {
  uint64_t padding =
      (k_external_alignment - m_offset % k_external_alignment) % k_external_alignment;
  if (padding > 0) {
    static const char zeros[k_external_alignment] = {};
    m_file.write(std::string_view(zeros, padding));
    m_offset += padding;
  }
}

uint64_t DataFileWriter::place(const StoredBytes& stored) {
  // Where the bytes come from identifies them: copies of one model (high, low) refer to
  // the same table entries, and comparing places costs nothing, unlike hashing.
  std::tuple<int, const void*, uint64_t, uint64_t> where;
  if (stored.slice) {
    where = {0, stored.slice->file.get(), stored.slice->offset, stored.slice->length};
  } else if (stored.typed) {
    where = {1, stored.typed->file.get(), stored.typed->values.begin, stored.size};
  } else {
    where = {2, stored.bytes.data(), stored.bytes.size(), 0};
  }
  auto found = m_by_place.find(where);
  if (found != m_by_place.end()) {
    return found->second;
  }
  // Bytes in memory (a converted weight) may equal bytes placed before, made separately
  // (the same constant converted in two graphs): compared by content. A mapped slice is not
  // read for that: its pages would all be faulted in, and the passes merged equal weights.
  bool in_memory = !stored.slice && !stored.typed;
  if (in_memory) {
    auto same = m_by_content.find(stored.bytes);
    if (same != m_by_content.end()) {
      m_by_place.emplace(where, same->second);
      return same->second;
    }
  }
  align();
  uint64_t offset = m_offset;
  write_stored(m_file, stored);
  m_offset += stored.size;
  m_by_place.emplace(where, offset);
  if (in_memory) {
    m_by_content.emplace(stored.bytes, offset);
  }
  return offset;
}

uint64_t DataFileWriter::place(std::string_view raw) {
  auto found = m_by_content.find(raw);
  if (found != m_by_content.end()) {
    return found->second;
  }
  align();
  uint64_t offset = m_offset;
  m_file.write(raw);
  m_offset += raw.size();
  m_by_content.emplace(raw, offset);
  return offset;
}

SavedReference save_reference(onnx::TensorProto& tensor) {
  SavedReference saved{&tensor, {}};
  saved.external_data.Swap(tensor.mutable_external_data());
  tensor.clear_data_location();
  return saved;
}

void restore_references(std::vector<SavedReference>& saved) {
  for (auto& entry : saved) {
    entry.tensor->clear_raw_data();
    entry.tensor->mutable_external_data()->Swap(&entry.external_data);
    entry.tensor->set_data_location(onnx::TensorProto::EXTERNAL);
  }
  saved.clear();
}

// Places the tensor's bytes in the data file, taking them out of the tensor: the offset.
uint64_t Externalizer::move_out(onnx::TensorProto& tensor) {
  if (model::is_stored(tensor)) {
    StoredBytes stored = stored_bytes(tensor);
    m_references.push_back(save_reference(tensor));
    return m_data.place(stored);
  }
  Moved& moved = m_moved.emplace_back(Moved{&tensor, {}});
  moved.data.swap(*tensor.mutable_raw_data());
  tensor.clear_raw_data();
  return m_data.place(moved.data);
}

void Externalizer::run() {
  model::for_each_tensor(*m_model.mutable_graph(), [&](onnx::TensorProto& tensor) {
    uint64_t length = 0;
    if (model::is_stored(tensor)) {
      length = model::stored_size(tensor);
    } else if (tensor.has_raw_data() && tensor.raw_data().size() >= k_external_threshold) {
      length = tensor.raw_data().size();
    } else {
      return;
    }
    uint64_t offset = move_out(tensor);
    tensor.set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const char* key, const std::string& value) {
      auto* entry = tensor.add_external_data();
      entry->set_key(key);
      entry->set_value(value);
    };
    add("location", m_data.name());
    add("offset", std::to_string(offset));
    add("length", std::to_string(length));
  });
}

void Externalizer::restore() {
  for (auto& moved : m_moved) {
    moved.tensor->clear_external_data();
    moved.tensor->clear_data_location();
    moved.tensor->mutable_raw_data()->swap(moved.data);
  }
  m_moved.clear();
  restore_references(m_references);
}

} // namespace npucc::output
