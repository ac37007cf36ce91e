#pragma once

#include "npucc/compile.h"
#include "precision/compile_precision.h"

#include <string>

namespace npucc::compiler {

// --check-accuracy on a compile's variants, before anything is written: loads the samples
// (or makes random inputs), runs the high graph and the low graph's emulation (the one
// --emit-emulation writes, else made here) in ONNX Runtime's process, and returns the
// manifest's "accuracy" object as JSON text. Throws npucc::Error in one line (bad samples,
// no ONNX Runtime, a graph the runtime refuses or crashes on); usage_error without a low
// graph to check.
std::string run_accuracy_check(const precision::PrecisionBuild& variants,
                               const CompileOptions& options, const LogSink& log);

} // namespace npucc::compiler
