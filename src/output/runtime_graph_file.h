#pragma once

#include "runtime/runtime.h"
#include "util/private_temp_folder.h"

#include <onnx/onnx_pb.h>

// A graph handed to ONNX Runtime as a file it reads itself (runtime::GraphSource), written as
// a compile writes its outputs: weights streamed from where npucc keeps them, external data
// past 2 GiB. It holds the user's weights inline, so it goes to a private temporary folder
// (util/private_temp_folder.h: "npucc-graph.tmp.PID.XXXXXX" in $TMPDIR, else /tmp, mode
// 0700, the files 0600), removed with this object, or by the interrupt handler's sweep.
namespace npucc::output {

class RuntimeGraphFile {
public:
  // `model` is left as it was passed in.
  explicit RuntimeGraphFile(onnx::ModelProto& model);

  runtime::GraphSource source() const {
    return runtime::GraphSource::in_file(m_folder.path() / k_file_name);
  }

private:
  static constexpr const char* k_file_name = "graph.onnx"; // its external data beside it
  util::PrivateTempFolder m_folder;
};

} // namespace npucc::output
