#include "compiler/graph_writer.h"

#include "model/graph_walk.h"
#include "npucc/error.h"
#include "util/file_io.h"
#include "util/sha256.h"

#include <limits>

namespace npucc::compiler {

namespace fs = std::filesystem;

namespace {

constexpr uint64_t k_external_threshold = 1024;
constexpr uint64_t k_external_alignment = 64;
// Leave headroom under protobuf's 2 GiB limit for the graph itself.
constexpr uint64_t k_inline_limit = (uint64_t{2} << 30) - (uint64_t{64} << 20);

struct Moved {
  onnx::TensorProto* tensor;
  std::string data;
};

// Moves large raw_data out of the tensors into the data file, rewriting them as
// external references; restore() puts everything back so the caller's model is
// unchanged.
class Externalizer {
public:
  Externalizer(onnx::ModelProto& model, const fs::path& data_path, const std::string& location)
      : m_model(model), m_location(location), m_file(data_path) {}
  ~Externalizer() { restore(); }

  void run() {
    model::for_each_tensor(*m_model.mutable_graph(), [&](onnx::TensorProto& tensor) {
      if (!tensor.has_raw_data() || tensor.raw_data().size() < k_external_threshold) {
        return;
      }
      uint64_t padding = (k_external_alignment - m_offset % k_external_alignment) % k_external_alignment;
      if (padding > 0) {
        static const char zeros[k_external_alignment] = {};
        m_file.write(zeros, padding);
        m_hash.update(zeros, padding);
        m_offset += padding;
      }
      Moved moved{&tensor, {}};
      moved.data.swap(*tensor.mutable_raw_data());
      tensor.clear_raw_data();
      m_file.write(moved.data);
      m_hash.update(moved.data);
      tensor.set_data_location(onnx::TensorProto::EXTERNAL);
      auto add = [&](const char* key, const std::string& value) {
        auto* entry = tensor.add_external_data();
        entry->set_key(key);
        entry->set_value(value);
      };
      add("location", m_location);
      add("offset", std::to_string(m_offset));
      add("length", std::to_string(moved.data.size()));
      m_offset += moved.data.size();
      m_moved.push_back(std::move(moved));
    });
  }

  WrittenFile commit() {
    m_file.commit();
    return {m_location, m_hash.hex_digest(), m_offset};
  }

  void restore() {
    for (auto& moved : m_moved) {
      moved.tensor->clear_external_data();
      moved.tensor->clear_data_location();
      moved.tensor->mutable_raw_data()->swap(moved.data);
    }
    m_moved.clear();
  }

private:
  onnx::ModelProto& m_model;
  std::string m_location;
  util::AtomicFile m_file;
  util::Sha256 m_hash;
  uint64_t m_offset = 0;
  std::vector<Moved> m_moved;
};

WrittenFile write_proto(const onnx::ModelProto& model, const fs::path& path) {
  size_t size = model.ByteSizeLong();
  if (size > static_cast<size_t>(std::numeric_limits<int>::max())) {
    throw Error(path.string() + ": graph is too large for one protobuf message",
                "use --external-data");
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes)) {
    throw Error(path.string() + ": cannot serialise the graph");
  }
  util::write_file_atomic(path, bytes);
  return {path.filename().string(), util::sha256_hex(bytes), bytes.size()};
}

} // namespace

CompiledGraph write_graph(onnx::ModelProto& model, const fs::path& folder,
                          const std::string& file_name, ExternalData mode) {
  CompiledGraph result;
  const fs::path path = folder / file_name;
  bool external = mode == ExternalData::always || model.ByteSizeLong() > k_inline_limit;
  if (!external) {
    result.graph = write_proto(model, path);
    return result;
  }
  const std::string data_name = file_name + ".data";
  Externalizer externalizer(model, folder / data_name, data_name);
  externalizer.run();
  result.graph = write_proto(model, path);
  result.external_data.push_back(externalizer.commit());
  externalizer.restore();
  return result;
}

} // namespace npucc::compiler
