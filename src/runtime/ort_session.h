#pragma once

#include "runtime/tensor.h"
#include "util/file_stamp.h"

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

// ONNX Runtime's C API, used inside the runtime process only (runtime_process.cpp): npucc
// itself never loads the library.
namespace npucc::runtime::detail {

class OrtRunner {
public:
  // Loads the library (onnxruntime_library_path(), library_location.h) and
  // its C API version 29. Throws npucc::Error in one line saying how to get it.
  OrtRunner();
  ~OrtRunner();
  OrtRunner(const OrtRunner&) = delete;
  OrtRunner& operator=(const OrtRunner&) = delete;

  std::string version() const;
  // The graph is `model` (serialised) or, when `file` is not empty, that file.
  std::vector<TensorSet> run(std::string_view model, const std::string& file,
                             const std::vector<TensorSet>& inputs,
                             const std::vector<std::string>& outputs);

  // A graph for run_pair: serialised, or in `file` when that is not empty.
  struct Source {
    std::string_view model;
    std::string file;
    std::string what; // names the graph in errors: "the high graph: ONNX Runtime: ..."
  };
  // Runs graphs `a` and `b` on every input set, both at once (a session and a thread each),
  // and hands each set's outputs named `outputs`, viewed where ONNX Runtime wrote them, to
  // `each`, which may throw; then they are released, so one set's values are held at a time.
  using EachPair = std::function<void(const std::vector<TensorView>& a,
                                      const std::vector<TensorView>& b)>;
  void run_pair(const Source& a, const Source& b, const std::vector<TensorSet>& inputs,
                const std::vector<std::string>& outputs, const EachPair& each);

private:
  struct State;
  std::unique_ptr<State> m_state;
};

// The library a runtime process would load, as the cache key records it: its version (as its
// resolved file name carries it: libonnxruntime.so.1.30.0) and the SHA-256 of its bytes, so
// two builds of one version, whatever their sizes, never share accuracy results ("none" when
// npucc was built without ONNX Runtime; "missing PATH" when it is not there). Does not load
// it. The SHA-256 is read once per process and stamp of the file, or taken from
// remember_library_digest.
std::string library_identity();

// The library file library_identity describes, links resolved; empty without ONNX Runtime or
// when it is missing.
std::filesystem::path library_file();

// What a caller knows of the library file's SHA-256 at `stamp` (pipeline: the digest cache's
// record for it, cache/input_digests.h), so that library_identity need not read 40 MB at
// every compile: used while the file's stamp is `stamp`.
void remember_library_digest(const util::FileStamp& stamp, const std::string& sha256);

} // namespace npucc::runtime::detail
