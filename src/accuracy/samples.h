#pragma once

#include "runtime/tensor.h"

#include <cstdint>
#include <filesystem>
#include <onnx/onnx_pb.h>
#include <string>
#include <vector>

// The inputs an accuracy check runs both graphs on: the user's samples (--sample-inputs),
// or random values from a fixed seed.
namespace npucc::accuracy {

// A graph input as the compiled graph declares it (a dim of -1 is dynamic).
struct ModelInput {
  std::string name;
  int32_t type = 0;
  std::vector<int64_t> dims;
};
// The graph's inputs that are not initializers, in order.
std::vector<ModelInput> model_inputs(const onnx::GraphProto& graph);

struct Samples {
  std::string origin; // "samples" or "random"
  std::vector<runtime::TensorSet> sets;
  std::vector<std::string> sources; // per set: the file or folder it came from
  std::vector<std::vector<std::string>> files; // per set, per input: the file it came from
};

// Reads every PATH of --sample-inputs; each holds one or more sample sets:
// - a folder of ONNX test data sets (test_data_set_*/input_*.pb), one set per subfolder, or
//   one such folder itself: TensorProto files named by their name field, else by position;
// - a .npz file (arrays named after the inputs), or a folder of .npz files, one set each;
// - a folder of .npy files named after the inputs: one set.
// Every set must give each input once, of its element type and of its shape (any size for
// a dynamic dim): otherwise an npucc::Error naming the file, the input and what was expected.
Samples load_samples(const std::vector<std::filesystem::path>& paths,
                     const std::vector<ModelInput>& inputs);

// One set of random values from a fixed seed: floats uniform in [-1, 1), integers 0 or 1
// (valid indices for any table), bools either. Throws npucc::Error naming an input with a
// dynamic dim (--input-shape fixes it).
Samples random_samples(const std::vector<ModelInput>& inputs);

// SHA-256 over the samples' files (paths relative to each PATH, and contents), for the
// cache key: the same samples give the same digest wherever they are.
std::string samples_digest(const std::vector<std::filesystem::path>& paths);

} // namespace npucc::accuracy
