#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace npucc {

// What ONNX 1.12 (the ONNX npucc is built on) can handle.
inline constexpr int64_t k_max_ir_version = 8;
inline constexpr int64_t k_max_default_opset = 17;
inline constexpr int64_t k_max_ml_opset = 3;
inline constexpr int64_t k_max_training_opset = 1;

struct ReadLimits {
  // Largest single tensor a model may declare, in bytes; guards against models that
  // claim enormous tensors (a dimension of 2^40) before anything is allocated.
  uint64_t max_tensor_bytes = uint64_t{64} << 30;
};

// One external data file a model refers to, as resolved inside the model's folder.
struct ExternalFile {
  std::string location; // as written in the model
  std::filesystem::path path;
  uint64_t bytes_used = 0;
};

// A model read from disk, with external data loaded into the tensors (so that the
// checker, shape inference and passes see ordinary tensors).
struct Model {
  onnx::ModelProto proto;
  std::filesystem::path path;
  uint64_t file_bytes = 0;
  std::string sha256; // of the .onnx file's bytes
  std::vector<ExternalFile> external_files;
};

// Reads and structurally validates an ONNX file: protobuf, IR and opset versions,
// external data (relative, inside the model's folder, in bounds) and tensor sizes.
// Throws npucc::Error with a one-line message naming the file.
Model read_model(const std::filesystem::path& path, const ReadLimits& limits = {});

// Parses a model from bytes already in memory (tests, fuzzing). External data is
// resolved relative to `dir`.
Model parse_model(const std::string& bytes, const std::filesystem::path& name_for_errors,
                  const ReadLimits& limits = {});

} // namespace npucc
