#pragma once

#include "runtime/tensor.h"

#include <filesystem>
#include <string>
#include <vector>

// The file formats samples come in (accuracy/samples.h), each read into runtime tensors.
// Every error is an npucc::Error naming the file.
namespace npucc::accuracy {

// A NumPy .npy file's bytes (format 1.0-3.0, little-endian or single-byte types, C order).
// The tensor is named `name`.
runtime::Tensor parse_npy(const std::string& bytes, const std::string& name,
                          const std::string& file);

// Every array of a .npz archive (np.savez or np.savez_compressed), named after its member
// without ".npy".
std::vector<runtime::Tensor> read_npz(const std::filesystem::path& file);
// The same, from the archive's bytes (`file` names it in errors).
std::vector<runtime::Tensor> parse_npz(const std::string& bytes, const std::string& file);

// An ONNX TensorProto file (test_data_set_*/input_*.pb), named by its own name field.
runtime::Tensor read_tensor_proto(const std::filesystem::path& file);
// The same, from the file's bytes (`file` names it in errors).
runtime::Tensor parse_tensor_proto(const std::string& bytes, const std::string& file);

} // namespace npucc::accuracy
