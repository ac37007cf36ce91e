#pragma once

#include "output/hashed_file.h"
#include "output/message_stream.h"

#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <onnx/onnx_pb.h>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

// Writing a graph's large tensors to an external data file instead of into the graph: the
// file of one graph (`high.onnx.data`), or one file that several graphs of a compile share
// (`weights.data`), where a tensor that more than one of them holds is stored once and every
// graph refers to the same offset.
namespace npucc::output {

// Tensors of this many bytes or more go to the data file; smaller ones stay in the graph.
constexpr uint64_t k_external_threshold = 1024;
// Offsets in a data file are multiples of this (ONNX Runtime may map the file).
constexpr uint64_t k_external_alignment = 64;

// One external data file being written. Each place() appends bytes at an aligned offset,
// unless the same bytes were placed before: a table reference to the same place in the
// weight table (model/weight_store.h), or equal bytes held in memory (raw_data, converted
// weights). So two graphs that share their master weights refer to one copy. The views of
// bytes in memory must stay valid while this lives (the table's, the Externalizers').
class DataFileWriter {
public:
  DataFileWriter(const std::filesystem::path& folder, std::string name, WriteControl* control);

  const std::string& name() const { return m_name; }
  // The offset of `stored` in the file.
  uint64_t place(const StoredBytes& stored);
  // The offset of `raw` in the file; the bytes must stay where they are while this lives.
  uint64_t place(std::string_view raw);
  bool empty() const { return m_offset == 0; }
  WrittenFile commit(FileIdentity& written_as) { return m_file.commit(m_name, written_as); }

private:
  void align();

  HashedFile m_file;
  std::string m_name;
  uint64_t m_offset = 0;
  std::map<std::tuple<int, const void*, uint64_t, uint64_t>, uint64_t> m_by_place;
  std::unordered_map<std::string_view, uint64_t> m_by_content;
};

// A table reference taken out of a tensor for writing, to be put back (restore_references)
// so that the caller's model is unchanged.
struct SavedReference {
  onnx::TensorProto* tensor;
  google::protobuf::RepeatedPtrField<onnx::StringStringEntryProto> external_data;
};
SavedReference save_reference(onnx::TensorProto& tensor);
void restore_references(std::vector<SavedReference>& saved);

// Rewrites a model's tensors of k_external_threshold bytes or more (at any depth) as
// references into `data`, placing their bytes there; restore() (or the destructor) puts
// the model back as it was.
class Externalizer {
public:
  Externalizer(onnx::ModelProto& model, DataFileWriter& data) : m_model(model), m_data(data) {}
  ~Externalizer() { restore(); }
  Externalizer(const Externalizer&) = delete;
  Externalizer& operator=(const Externalizer&) = delete;

  void run();
  void restore();

private:
  struct Moved {
    onnx::TensorProto* tensor;
    std::string data;
  };
  uint64_t move_out(onnx::TensorProto& tensor);

  onnx::ModelProto& m_model;
  DataFileWriter& m_data;
  std::deque<Moved> m_moved; // a deque: DataFileWriter keeps views of the moved bytes
  std::vector<SavedReference> m_references;
};

} // namespace npucc::output
