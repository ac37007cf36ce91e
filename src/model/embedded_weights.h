#pragma once

#include "model/typed_data.h"
#include "model/weight_store.h"
#include "model/wire_source.h"
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

// Where one left-out raw_data lies in the file, or (`typed`) a typed field's values,
// decoded when read (typed_data.h).
struct EmbeddedSlice {
  uint64_t offset = 0;
  uint64_t length = 0;
  std::optional<TypedValues> typed;
  uint64_t raw_length() const { return typed ? typed->raw_length() : length; }
};

struct Skeleton {
  std::string bytes;                 // the file without the left-out fields
  std::vector<EmbeddedSlice> slices; // indexed by the markers in `bytes`
};

// The skeleton of the serialized ModelProto `file`, leaving out the raw_data of
// initializers (in the main graph and in subgraphs, up to `max_nesting` levels) of
// k_weight_store_threshold bytes or more; with TableScope::every_tensor, of attribute
// tensors (Constant values) too, and of a tensor's typed field (float_data, int64_data...)
// when it is the tensor's only data and matches its dims: a float32 tensor's packed
// float_data (a float64's double_data) is its raw data as it is, any other is checked by
// decoding it (typed_data.h) when its raw data would be at most `max_decoded_bytes`.
// nullopt when the file does not have the plain shape this walk follows (a malformed
// field, a group, a tensor with two raw_data fields, deeper nesting): the caller then
// parses the whole file, and protobuf's and the reader's own checks say what is wrong.
std::optional<Skeleton> cut_embedded_weights(WireSource& file, int max_nesting,
                                             TableScope scope = TableScope::initializers,
                                             uint64_t max_decoded_bytes = 0);

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

// Makes each left-out tensor a reference into `store` to its slice (or typed values) of
// `file`. Their sizes are checked by the reader first, as every tensor's are.
void adopt_left_out(const std::vector<LeftOutWeight>& weights,
                    const std::shared_ptr<const util::MappedFile>& file, WeightStore& store);

} // namespace npucc::model
