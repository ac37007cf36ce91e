#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

// The one walk over --sample-inputs / --validation-inputs paths: which sample sets they
// hold and which files each set reads. Reading (samples.h) and the cache key's digest
// (samples_digest) both take its result, so the key covers exactly the files a check runs.
// Symbolic links are followed, to files and to folders alike: a set folder, a .npz or a
// .npy that is a link is read through it, and its digest is of the bytes the link leads to.
// Layouts of one PATH, the first that matches (npucc-compile(1), ACCURACY):
//   1. a .npz file: one set;
//   2. a folder of test_data_set_* folders (input_*.pb): one set per folder;
//   3. a folder holding input_*.pb: one set;
//   4. a folder of .npz files: one set per file;
//   5. a folder of .npy files named after the inputs: one set;
//   6. a folder of set folders, each holding .npy files or input_*.pb (one level deep):
//      one set per folder, in name order; subfolders holding neither are skipped.
namespace npucc::accuracy {

enum class SetLayout { tensor_protos, npz, npy_folder };

struct SampleSetFiles {
  std::string source;                      // the set's folder or file, for messages
  SetLayout layout = SetLayout::npy_folder;
  std::vector<std::filesystem::path> files; // every file the set reads, in reading order
  std::vector<std::string> names;           // each file's name relative to its PATH
  uint64_t bytes = 0;                       // the files' sizes when walked
};

// Every set of every PATH, in order. `option` names the paths in errors
// ("--sample-inputs"). Throws npucc::Error for a missing path or a folder with no set.
std::vector<SampleSetFiles> walk_samples(const std::vector<std::filesystem::path>& paths,
                                         const std::string& option);

// input_N.pb -> N, or -1.
int64_t tensor_proto_index(const std::filesystem::path& file);

} // namespace npucc::accuracy
