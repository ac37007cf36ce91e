#pragma once

#include "runtime/runtime.h"

#include <filesystem>
#include <onnx/onnx_pb.h>
#include <vector>

// A graph handed to ONNX Runtime as a file it reads itself (runtime::GraphSource), written as
// a compile writes its outputs: weights streamed from where npucc keeps them, external data
// past 2 GiB. It goes to the temporary folder ($TMPDIR, else /tmp) under a name of this
// process's ("npucc-graph.tmp.PID.RANDOM.onnx"), and is removed with this object, or by the
// interrupt handler's sweep on Ctrl-C.
namespace npucc::compiler {

class RuntimeGraphFile {
public:
  // `model` is left as it was passed in.
  explicit RuntimeGraphFile(onnx::ModelProto& model);
  ~RuntimeGraphFile();
  RuntimeGraphFile(const RuntimeGraphFile&) = delete;
  RuntimeGraphFile& operator=(const RuntimeGraphFile&) = delete;

  runtime::GraphSource source() const { return runtime::GraphSource::in_file(m_path.string()); }

private:
  std::filesystem::path m_path;
  std::vector<std::filesystem::path> m_files; // the graph and its external data
};

} // namespace npucc::compiler
