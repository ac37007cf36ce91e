#pragma once

#include "accuracy/sample_walk.h"
#include "runtime/tensor.h"

#include <cstdint>
#include <filesystem>
#include <onnx/onnx_pb.h>
#include <string>
#include <utility>
#include <vector>

// The inputs an accuracy check runs both graphs on: the user's samples (--sample-inputs,
// --validation-inputs), or random values from a fixed seed.
namespace npucc::accuracy {

// A graph input as the compiled graph declares it (a dim of -1 is dynamic).
struct ModelInput {
  std::string name;
  int32_t type = 0;
  std::vector<int64_t> dims;
};
// The graph's inputs that are not initializers, in order.
std::vector<ModelInput> model_inputs(const onnx::GraphProto& graph);

// Sets whose files total at most held_bytes are read once and held; larger samples are
// read again, batch_bytes at a time, whenever they run: peak memory is then a batch,
// whatever the number of sets. A batch is one runtime request (a session per graph and
// runtime process), so it is not made smaller than it needs to be.
struct SampleBudget {
  uint64_t held_bytes = uint64_t{64} << 20;
  uint64_t batch_bytes = uint64_t{8} << 20;
};

// The sets a check runs.
struct Samples {
  std::string origin; // "samples" or "random"
  std::vector<runtime::TensorSet> sets; // every set, when held; else empty
  std::vector<std::string> sources;     // per set: the file or folder it came from
  std::vector<SampleSetFiles> files;    // per set: what it reads (empty for random inputs)
  std::vector<ModelInput> inputs;
  SampleBudget budget;
  std::string option = "--sample-inputs"; // names the sets' paths in errors
  bool allow_nonfinite = false; // --allow-nonfinite-samples: else load() refuses NaN and Inf

  size_t count() const { return sources.size(); }
  // Whether every set is held in `sets` (read once), rather than read again per batch.
  bool held() const { return sets.size() == sources.size(); }
  // Sets [first, last), each in the inputs' order. Throws npucc::Error as load_samples
  // does, or naming a set whose files changed since the check first read them (a re-read
  // must give the bytes the first read did).
  std::vector<runtime::TensorSet> load(size_t first, size_t last) const;
  // Contiguous [first, last) ranges of the sets, each reading at most budget.batch_bytes
  // (one set at least); one range when the sets are held.
  std::vector<std::pair<size_t, size_t>> batches() const;

  mutable std::vector<std::string> read_digests; // per set: SHA-256 of its first read
};

// Reads every PATH of `option` (--sample-inputs, --validation-inputs): the sets
// walk_samples finds (sample_walk.h lists the layouts). Every set must give each input
// once, of its element type and of its shape (any size for a dynamic dim): otherwise an
// npucc::Error naming the file, the input and what was expected. Samples over
// budget.held_bytes are checked as they are read, when they first run. Unless
// `allow_nonfinite` (--allow-nonfinite-samples), a set holding a NaN or infinite value is
// refused in one line naming the file, the input and the counts.
Samples load_samples(const std::vector<std::filesystem::path>& paths,
                     const std::vector<ModelInput>& inputs,
                     const std::string& option = "--sample-inputs", SampleBudget budget = {},
                     bool allow_nonfinite = false);

// The sets held out of the accuracy repair's search when no --validation-inputs are given
// (npucc-compile(1), ACCURACY): with at least k_holdout_minimum sets, every
// k_holdout_every-th one (the 4th, the 8th, ...) moves from `samples` to the returned
// Samples, in order; with fewer, none.
constexpr size_t k_holdout_minimum = 8;
constexpr size_t k_holdout_every = 4;
Samples hold_out(Samples& samples);

// One set of random values from a fixed seed: floats uniform in [-1, 1), integers 0 or 1
// (valid indices for any table), bools either. Throws npucc::Error naming an input with a
// dynamic dim (--input-shape fixes it).
Samples random_samples(const std::vector<ModelInput>& inputs);

// SHA-256 over the files walk_samples finds (names relative to each PATH, and contents),
// for the cache key: the same samples give the same digest wherever they are, and it
// covers exactly the files a check reads.
std::string samples_digest(const std::vector<std::filesystem::path>& paths,
                           const std::string& option = "--sample-inputs");

} // namespace npucc::accuracy
