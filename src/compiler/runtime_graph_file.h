#pragma once

#include "runtime/runtime.h"
#include "util/file_io.h"

#include <onnx/onnx_pb.h>

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

  runtime::GraphSource source() const { return runtime::GraphSource::in_file(m_file.path()); }

private:
  util::TemporaryPath m_file; // the graph, and its external data beside it
};

} // namespace npucc::compiler
