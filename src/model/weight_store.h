#pragma once

#include "model/typed_data.h"
#include "npucc/model.h"
#include "util/mapped_file.h"

#include <memory>
#include <onnx/onnx_pb.h>
#include <optional>
#include <string>
#include <string_view>

// Large weights live outside the protobuf while a model is compiled: the TensorProto
// keeps its name, type and dims and is marked EXTERNAL with a location naming an entry
// of a process-wide table, whose bytes are a slice of a mapped file or a buffer the
// table owns. Copying the proto (checker, shape inference retries, precision variants)
// then copies metadata only, external data is read once (through the page cache), and
// a model past protobuf's 2 GiB limit is never one message. The writers stream the
// bytes back into the output (output/graph_writer.cpp); nothing else may write such
// a location to disk.
namespace npucc::model {

// Tensors of this many bytes or more are kept in the table; smaller ones (shape
// arguments that shape inference reads) stay in raw_data.
inline constexpr uint64_t k_weight_store_threshold = 16 * 1024;

// Which tensors a reader puts in the table. Compile and inspect put every large tensor
// there: initializers, Constant values (PaddlePaddle's exporter writes its weights so),
// and typed fields (float_data, int64_data..., as older TensorFlow converters write
// them; typed_data.h). `initializers` (raw data of initializers only) is what readers
// did before, kept for tests that compare the two.
enum class TableScope { initializers, every_tensor };

// Owns the table entries it created; they are released with it. Held by a Model.
class WeightStore {
public:
  WeightStore();
  ~WeightStore();
  WeightStore(const WeightStore&) = delete;
  WeightStore& operator=(const WeightStore&) = delete;

  // Moves `tensor`'s bytes into the table (no copy): the tensor becomes a reference.
  void adopt(onnx::TensorProto& tensor, std::string bytes);
  // Points `tensor` at `length` bytes of `file` from `offset` (checked by the caller).
  void adopt_mapped(onnx::TensorProto& tensor, std::shared_ptr<const util::MappedFile> file,
                    uint64_t offset, uint64_t length);
  // Points `tensor` at typed values in `file` (checked by the caller): its raw bytes are
  // decoded when they are read, a block at a time by the writers (typed_slice).
  void adopt_typed(onnx::TensorProto& tensor, std::shared_ptr<const util::MappedFile> file,
                   const TypedValues& values);
  // Moves every large raw_data of the graph's initializers (any depth) into the table.
  void adopt_initializers(onnx::GraphProto& graph);

  // The model's input files, each opened once (util/input_file.h): the model file and its
  // external data, opened by the reader or by whoever read them before it (the cache's
  // lookup hashes the model file first), for every later reader to share.
  util::InputFiles& inputs() { return *m_inputs; }
  const std::shared_ptr<util::InputFiles>& shared_inputs() const { return m_inputs; }
  void share_inputs(std::shared_ptr<util::InputFiles> inputs) { m_inputs = std::move(inputs); }

private:
  void refer(onnx::TensorProto& tensor, uint64_t id);
  uint64_t m_store_id;
  std::shared_ptr<util::InputFiles> m_inputs;
};

// Makes `tensor` a reference to no table entry, dropping its raw_data: what a copy sent
// to another process carries instead of large bytes (check/isolated_worker.h).
// is_stored() is true for it; raw_bytes() throws.
void make_placeholder(onnx::TensorProto& tensor);
// True when `tensor` refers to a table entry (its bytes are available in memory).
bool is_stored(const onnx::TensorProto& tensor);
// True when `tensor` is external data that nobody loaded (its bytes are unavailable).
bool is_unloaded_external(const onnx::TensorProto& tensor);
// The tensor's bytes when they are raw: raw_data, or its table entry. nullopt for
// typed fields (float_data...) and unloaded external data. The view stays valid while
// the owning WeightStore lives. An entry of typed values is decoded into memory on the
// first call (passes that read a few values call it; writers stream typed_slice).
std::optional<std::string_view> raw_bytes(const onnx::TensorProto& tensor);
// The size of a table reference's raw bytes, without decoding typed values.
uint64_t stored_size(const onnx::TensorProto& tensor);
// Where a table reference's bytes are when they are a slice of a mapped file.
struct MappedSlice {
  std::shared_ptr<const util::MappedFile> file;
  uint64_t offset = 0;
  uint64_t length = 0;
};
// nullopt unless `tensor` refers to a table entry that is a slice of a mapped file.
std::optional<MappedSlice> mapped_slice(const onnx::TensorProto& tensor);
// Where a table reference's bytes are when they are typed values in a mapped file.
struct TypedSlice {
  std::shared_ptr<const util::MappedFile> file;
  TypedValues values;
};
// nullopt unless `tensor` refers to typed values (adopt_typed).
std::optional<TypedSlice> typed_slice(const onnx::TensorProto& tensor);
// Decodes `slice` from its file (read with pread, not through the mapping) into `out`.
// Throws npucc::Error when the file changed since it was read.
void decode_typed_slice(const TypedSlice& slice, const RawBlocks& out);
// Replaces a table reference by ordinary raw_data (a copy), e.g. before a tensor is
// handed to code that reads raw_data itself.
void materialize(onnx::TensorProto& tensor);
// Gives `tensor` new raw bytes, kept in the same store as `like` when that one is a
// table reference (so converted weights stay outside the protobuf too).
void replace_bytes(onnx::TensorProto& tensor, std::string bytes);

// The store of a model read with Weights::in_table (Model::weights, opaque in the public
// header), or null.
WeightStore* weight_store(const Model& model);
// The same, made (empty) when the model has none.
WeightStore& ensure_weight_store(Model& model);
// The input files the model was read from, opened once (WeightStore::inputs), or null for
// a model read with Weights::in_proto: whoever reads them again asks these.
std::shared_ptr<util::InputFiles> input_files(const Model& model);

} // namespace npucc::model
