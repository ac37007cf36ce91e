#pragma once

#include "model/weight_store.h"
#include "util/mapped_file.h"

#include <cstdint>
#include <memory>
#include <onnx/onnx_pb.h>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// Single-file models keep their weights inside the protobuf (torch.onnx.export's default
// under 2 GB). Parsing such a file copies every weight into a protobuf string, beside the
// file's own bytes: twice the model in memory. Instead, the file is mapped and its wire
// format walked (each field starts with a tag and, for bytes and messages, a length, so a
// reader can step over a field's contents without touching them): the raw_data of every
// large initializer is left out of a much smaller copy of the file, the skeleton, which
// protobuf parses. Each left-out field is replaced by a marker naming its slice of the
// file, and adopt_left_out turns each marked tensor into a reference to that slice, as
// external data is (weight_store.h). Nothing else changes: the parsed model is
// the one a full parse gives, with the large initializers in the weight table.
namespace npucc::model {

// Where one left-out raw_data lies in the file.
struct EmbeddedSlice {
  uint64_t offset = 0;
  uint64_t length = 0;
};

struct Skeleton {
  std::string bytes;                 // the file without the left-out fields
  std::vector<EmbeddedSlice> slices; // indexed by the markers in `bytes`
};

// Where the cut reads a serialized model from: bytes in memory, or an open file read
// with pread() a window at a time, never through a mapping (on a kernel that keeps large
// folios in the page cache, touching one byte of a mapping maps a megabyte or more, so
// a walk over a file's field headers would map most of its weights).
class WireSource {
public:
  explicit WireSource(std::string_view bytes) : m_bytes(bytes), m_size(bytes.size()) {}
  WireSource(int fd, uint64_t size) : m_fd(fd), m_size(size) {}
  uint64_t size() const { return m_size; }
  // The byte at `pos` (< size()); false on a read error.
  bool byte(uint64_t pos, uint8_t& out);
  // Appends the `length` bytes at `pos` to `out`; false on a read error.
  bool append(uint64_t pos, uint64_t length, std::string& out);

private:
  static constexpr size_t k_window = 64 * 1024;
  std::string_view m_bytes;
  int m_fd = -1;
  uint64_t m_size = 0;
  std::string m_window;
  uint64_t m_window_start = 0;
};

// The skeleton of the serialized ModelProto `file`, leaving out the raw_data of
// initializers (in the main graph and in subgraphs, up to `max_nesting` levels) of
// k_weight_store_threshold bytes or more; with TableScope::every_tensor, of attribute
// tensors (Constant values) too, and a float32 tensor's packed float_data (a float64's
// double_data) when it is the tensor's only data and matches its dims: those bytes are
// its raw data. nullopt when the file does not have the plain shape this walk follows (a
// malformed field, a group, a tensor with two raw_data fields, deeper nesting): the caller
// then parses the whole file, and protobuf's and the reader's own checks say what is wrong.
std::optional<Skeleton> cut_embedded_weights(WireSource& file, int max_nesting,
                                             TableScope scope = TableScope::initializers);

// A tensor of the parsed skeleton whose data was left out, and where it is.
struct LeftOutWeight {
  onnx::TensorProto* tensor = nullptr;
  EmbeddedSlice slice;
};

// After the skeleton was parsed into `proto`: the marked tensors, their markers
// removed (the tensors then hold no data until adopt_left_out). Throws npucc::Error naming
// `file_name` when a marker has gone astray (a bug).
std::vector<LeftOutWeight> take_left_out(onnx::ModelProto& proto, const Skeleton& skeleton,
                                         const std::string& file_name);

// Makes each left-out tensor a reference into `store` to its slice of `file`. Their
// sizes are checked by the reader first, as every tensor's are.
void adopt_left_out(const std::vector<LeftOutWeight>& weights,
                    const std::shared_ptr<const util::MappedFile>& file, WeightStore& store);

} // namespace npucc::model
