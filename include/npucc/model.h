#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <onnx/onnx_pb.h>
#include <string>
#include <vector>

namespace npucc {

// The newest versions npucc reads and writes: IR 13 and ai.onnx opset 26 (ONNX 1.21),
// ai.onnx.ml 5. ONNX 1.12, the library npucc is built on, knows IR 8 and opset 17;
// npucc's own schemas cover the operator versions since (src/schemas/).
inline constexpr int64_t k_max_ir_version = 13;
inline constexpr int64_t k_max_default_opset = 26;
inline constexpr int64_t k_max_ml_opset = 5;
inline constexpr int64_t k_max_training_opset = 1;

// A quarter of physical memory: compiling holds the model's data about three times
// over (the read model, shape inference's copy, the written graph).
uint64_t default_max_memory_bytes();

// Deepest nesting of subgraphs (If/Loop/Scan bodies) a model may have; real models
// nest a few levels, and deeper ones only exhaust the stack of ONNX's recursive code.
inline constexpr int k_default_max_subgraph_depth = 64;

struct ReadLimits {
  // Largest single tensor a model may declare, in bytes; guards against models that
  // claim enormous tensors (a dimension of 2^40) before anything is allocated.
  uint64_t max_tensor_bytes = uint64_t{64} << 30;
  // Most bytes of model data brought into memory: the .onnx file plus the external
  // data it loads. Checked before reading, so an oversized model fails fast.
  uint64_t max_memory_bytes = default_max_memory_bytes();
  int max_subgraph_depth = k_default_max_subgraph_depth;
  // Most outer names all subgraphs together can see (each body sees every name its
  // enclosing graphs define). ONNX's checker copies that scope per body, so the work
  // grows with bodies x outer names: 20 M is about half a minute of checking.
  uint64_t max_subgraph_scope_names = 20'000'000;
};

// One external data file a model refers to, as resolved inside the model's folder.
struct ExternalFile {
  std::string location; // as written in the model
  std::filesystem::path path;
  uint64_t bytes_used = 0;
};

// Where a read model's weights go. in_proto: every tensor holds its bytes (raw_data),
// and `proto` stands alone. in_table (what compile and inspect use): every tensor of
// 16 KiB or more (initializers, Constant values, float_data, int64_data and the other
// typed fields) stays outside the protobuf in `weights`, in the mapped model or external
// data file rather than copied (src/model/weight_store.h): their TensorProto holds name,
// type and dims, and `proto` is only valid while the Model (its `weights`) lives.
// all_in_table: the same (it once added Constant values and float_data to in_table's
// initializers; kept for callers that name it).
enum class Weights { in_proto, in_table, all_in_table };

// A model read from disk.
struct Model {
  onnx::ModelProto proto;
  // Weights::in_table: the tables and file mappings that hold the large initializers'
  // bytes (null: in_proto). Opaque: only the library reads it; copies of a Model share it.
  std::shared_ptr<void> weights;
  std::filesystem::path path;
  uint64_t file_bytes = 0;
  std::string sha256; // of the .onnx file's bytes
  std::vector<ExternalFile> external_files;
};

// Parses a --max-memory value: bytes, or a number with a unit as parse_size_setting()
// (K/M/G/T powers of 1024, KB/MB/GB/TB powers of 1000). Throws a usage error naming the option.
uint64_t parse_memory_size(const std::string& text);

// Reads and structurally validates an ONNX file: protobuf, IR and opset versions,
// external data (relative, inside the model's folder, in bounds) and tensor sizes.
// Throws npucc::Error with a one-line message naming the file.
Model read_model(const std::filesystem::path& path, const ReadLimits& limits = {},
                 Weights weights = Weights::in_proto);

// Parses a model from bytes already in memory (tests, fuzzing). External data is
// resolved relative to `dir`.
Model parse_model(const std::string& bytes, const std::filesystem::path& name_for_errors,
                  const ReadLimits& limits = {}, Weights weights = Weights::in_proto);

} // namespace npucc
