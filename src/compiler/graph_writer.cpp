#include "compiler/graph_writer.h"

#include "model/graph_walk.h"
#include "model/weight_store.h"
#include "npucc/error.h"
#include "util/file_io.h"
#include "util/mapped_file.h"
#include "util/sha256.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>

namespace npucc::compiler {

namespace fs = std::filesystem;

namespace {

constexpr uint64_t k_external_threshold = 1024;
constexpr uint64_t k_external_alignment = 64;
// Leave headroom under protobuf's 2 GiB limit for the graph itself.
constexpr uint64_t k_inline_limit = (uint64_t{2} << 30) - (uint64_t{64} << 20);

// Wire-format tags (field number << 3 | length-delimited) of the fields streamed by hand.
constexpr char k_model_graph_tag = (7 << 3) | 2;
constexpr char k_graph_initializer_tag = (5 << 3) | 2;
constexpr char k_tensor_raw_data_tag = (9 << 3) | 2;

std::string varint(uint64_t value) {
  std::string out;
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
  return out;
}

// An AtomicFile that hashes what it writes, buffering small pieces.
class HashedFile {
public:
  // Unsynced: a compiler's outputs (see util::Durability); the cache re-hashes what a
  // crash may have cut short.
  explicit HashedFile(const fs::path& path)
      : m_file(path, util::Durability::unsynced), m_buffer(new char[k_buffer]) {}

  // Everything goes through the buffer, even large weights: write() straight from a
  // file mapping is several times slower than from anonymous memory (measured: 1.4 s
  // vs 0.2 s CPU for 500 MB). The copy also leaves each piece cache-hot for the hash.
  void write(std::string_view data) {
    m_bytes += data.size();
    while (!data.empty()) {
      size_t take = std::min(k_buffer - m_fill, data.size());
      std::memcpy(m_buffer.get() + m_fill, data.data(), take);
      m_fill += take;
      data.remove_prefix(take);
      flush_if_full();
    }
  }

  // A slice of a mapped input file (a weight): read into the buffer with pread() rather
  // than copied from the mapping, whose pages would each be faulted in (see
  // util::MappedFile::reopen). Falls back to the mapping when the file cannot be reopened.
  void write(const model::MappedSlice& slice) {
    if (slice.file.get() != m_source) {
      m_source = slice.file.get();
      m_source_fd = slice.file->reopen();
    }
    if (m_source_fd.get() < 0) {
      write(slice.file->bytes().substr(slice.offset, slice.length));
      return;
    }
    m_bytes += slice.length;
    uint64_t offset = slice.offset;
    uint64_t left = slice.length;
    while (left > 0) {
      size_t take = static_cast<size_t>(std::min<uint64_t>(k_buffer - m_fill, left));
      util::read_exactly(m_source_fd.get(), offset, m_buffer.get() + m_fill, take,
                         slice.file->path());
      m_fill += take;
      offset += take;
      left -= take;
      flush_if_full();
    }
  }

  uint64_t bytes() const { return m_bytes; }
  WrittenFile commit(const std::string& name) {
    flush();
    m_file.commit();
    return {name, m_hash.hex_digest(), m_bytes, m_file.identity()};
  }

private:
  static constexpr size_t k_buffer = 1 << 20;
  void flush_if_full() {
    if (m_fill == k_buffer) {
      flush();
    }
  }
  void flush() {
    m_hash.update(std::string_view(m_buffer.get(), m_fill));
    m_file.write(m_buffer.get(), m_fill);
    m_fill = 0;
  }
  util::AtomicFile m_file;
  util::Sha256 m_hash;
  std::unique_ptr<char[]> m_buffer;
  size_t m_fill = 0;
  uint64_t m_bytes = 0;
  const util::MappedFile* m_source = nullptr;
  util::Fd m_source_fd{-1};
};

// A stored tensor's bytes as the writer takes them: a slice of a mapped file when they
// are one, else the bytes themselves.
struct StoredBytes {
  std::string_view bytes;
  std::optional<model::MappedSlice> slice;
};

StoredBytes stored_bytes(const onnx::TensorProto& tensor) {
  return {*model::raw_bytes(tensor), model::mapped_slice(tensor)};
}

void write_stored(HashedFile& file, const StoredBytes& stored) {
  if (stored.slice) {
    file.write(*stored.slice);
  } else {
    file.write(stored.bytes);
  }
}

// Puts a tensor's table reference (weight_store.h) back after it was replaced for
// writing, so the caller's model is unchanged.
struct SavedReference {
  onnx::TensorProto* tensor;
  google::protobuf::RepeatedPtrField<onnx::StringStringEntryProto> external_data;
};

void restore(std::vector<SavedReference>& saved) {
  for (auto& entry : saved) {
    entry.tensor->clear_raw_data();
    entry.tensor->mutable_external_data()->Swap(&entry.external_data);
    entry.tensor->set_data_location(onnx::TensorProto::EXTERNAL);
  }
  saved.clear();
}

SavedReference save_reference(onnx::TensorProto& tensor) {
  SavedReference saved{&tensor, {}};
  saved.external_data.Swap(tensor.mutable_external_data());
  tensor.clear_data_location();
  return saved;
}

struct Moved {
  onnx::TensorProto* tensor;
  std::string data;
};

// Moves large raw_data and table references out of the tensors into the data file,
// rewriting them as external references; restore() puts everything back so the
// caller's model is unchanged.
class Externalizer {
public:
  Externalizer(onnx::ModelProto& model, const fs::path& data_path, const std::string& location)
      : m_model(model), m_location(location), m_file(data_path) {}
  ~Externalizer() { restore(); }

  void run() {
    model::for_each_tensor(*m_model.mutable_graph(), [&](onnx::TensorProto& tensor) {
      std::optional<StoredBytes> stored;
      if (model::is_stored(tensor)) {
        stored = stored_bytes(tensor);
      } else if (!tensor.has_raw_data() || tensor.raw_data().size() < k_external_threshold) {
        return;
      }
      uint64_t padding =
          (k_external_alignment - m_offset % k_external_alignment) % k_external_alignment;
      if (padding > 0) {
        static const char zeros[k_external_alignment] = {};
        m_file.write(std::string_view(zeros, padding));
        m_offset += padding;
      }
      uint64_t length = 0;
      if (stored) {
        m_references.push_back(save_reference(tensor));
        write_stored(m_file, *stored);
        length = stored->bytes.size();
      } else {
        Moved moved{&tensor, {}};
        moved.data.swap(*tensor.mutable_raw_data());
        tensor.clear_raw_data();
        m_file.write(moved.data);
        length = moved.data.size();
        m_moved.push_back(std::move(moved));
      }
      tensor.set_data_location(onnx::TensorProto::EXTERNAL);
      auto add = [&](const char* key, const std::string& value) {
        auto* entry = tensor.add_external_data();
        entry->set_key(key);
        entry->set_value(value);
      };
      add("location", m_location);
      add("offset", std::to_string(m_offset));
      add("length", std::to_string(length));
      m_offset += length;
    });
  }

  WrittenFile commit() { return m_file.commit(m_location); }

  void restore() {
    for (auto& moved : m_moved) {
      moved.tensor->clear_external_data();
      moved.tensor->clear_data_location();
      moved.tensor->mutable_raw_data()->swap(moved.data);
    }
    m_moved.clear();
    compiler::restore(m_references);
  }

private:
  onnx::ModelProto& m_model;
  std::string m_location;
  HashedFile m_file;
  uint64_t m_offset = 0;
  std::vector<Moved> m_moved;
  std::vector<SavedReference> m_references;
};

uint64_t stored_weight_bytes(onnx::ModelProto& model) {
  uint64_t total = 0;
  model::for_each_tensor(*model.mutable_graph(), [&](onnx::TensorProto& tensor) {
    if (model::is_stored(tensor)) {
      total += model::raw_bytes(tensor)->size();
    }
  });
  return total;
}

// Serialises `model` with its weights inline, streaming the top-level initializers'
// bytes from the weight table rather than building the message in memory: protobuf
// accepts fields in any order, so the graph's initializers follow its other fields and
// each table reference's raw_data follows the rest of its tensor.
WrittenFile write_inline(onnx::ModelProto& model, const fs::path& path) {
  auto& graph = *model.mutable_graph();
  google::protobuf::RepeatedPtrField<onnx::TensorProto> initializers;
  initializers.Swap(graph.mutable_initializer());
  // Rare: references in subgraphs are copied into raw_data for the write.
  std::vector<SavedReference> nested;
  auto put_back = [&] {
    for (auto& saved : nested) {
      saved.tensor->clear_raw_data();
    }
    restore(nested);
    initializers.Swap(graph.mutable_initializer());
  };
  try {
    model::for_each_tensor(graph, [&](onnx::TensorProto& tensor) {
      if (model::is_stored(tensor)) {
        std::string bytes(*model::raw_bytes(tensor));
        nested.push_back(save_reference(tensor));
        tensor.set_raw_data(std::move(bytes));
      }
    });
    struct Piece {
      std::string head;
      std::optional<StoredBytes> raw;
    };
    std::vector<Piece> pieces;
    uint64_t initializer_bytes = 0;
    for (const auto& tensor : initializers) {
      Piece piece;
      if (model::is_stored(tensor)) {
        onnx::TensorProto meta = tensor;
        meta.clear_external_data();
        meta.clear_data_location();
        piece.head = meta.SerializeAsString();
        piece.raw = stored_bytes(tensor);
      } else {
        piece.head = tensor.SerializeAsString();
      }
      uint64_t body = piece.head.size();
      if (piece.raw) {
        body += 1 + varint(piece.raw->bytes.size()).size() + piece.raw->bytes.size();
      }
      initializer_bytes += 1 + varint(body).size() + body;
      pieces.push_back(std::move(piece));
    }
    onnx::GraphProto* released = model.release_graph();
    std::string head;
    bool ok = model.SerializeToString(&head);
    model.set_allocated_graph(released);
    std::string rest;
    ok = ok && graph.SerializeToString(&rest);
    if (!ok) {
      throw Error(path.string() + ": cannot serialise the graph");
    }
    uint64_t graph_bytes = rest.size() + initializer_bytes;
    HashedFile file(path);
    file.write(head);
    file.write(std::string(1, k_model_graph_tag) + varint(graph_bytes));
    file.write(rest);
    for (const auto& piece : pieces) {
      uint64_t body = piece.head.size();
      if (piece.raw) {
        body += 1 + varint(piece.raw->bytes.size()).size() + piece.raw->bytes.size();
      }
      file.write(std::string(1, k_graph_initializer_tag) + varint(body));
      file.write(piece.head);
      if (piece.raw) {
        file.write(std::string(1, k_tensor_raw_data_tag) + varint(piece.raw->bytes.size()));
        write_stored(file, *piece.raw);
      }
    }
    WrittenFile written = file.commit(path.filename().string());
    put_back();
    return written;
  } catch (...) {
    put_back();
    throw;
  }
}

} // namespace

CompiledGraph write_graph(onnx::ModelProto& model, const fs::path& folder,
                          const std::string& file_name, ExternalData mode) {
  CompiledGraph result;
  const fs::path path = folder / file_name;
  bool external = mode == ExternalData::always ||
                  model.ByteSizeLong() + stored_weight_bytes(model) > k_inline_limit;
  if (!external) {
    result.graph = write_inline(model, path);
    return result;
  }
  const std::string data_name = file_name + k_external_data_suffix;
  Externalizer externalizer(model, folder / data_name, data_name);
  externalizer.run();
  if (model.ByteSizeLong() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    throw Error(path.string() + ": graph is too large for one protobuf message",
                "its structure alone (not the weights) is over 2 GiB");
  }
  result.graph = write_inline(model, path);
  result.external_data.push_back(externalizer.commit());
  externalizer.restore();
  return result;
}

} // namespace npucc::compiler
