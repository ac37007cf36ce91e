#pragma once

#include <onnx/onnx_pb.h>
#include <string>
#include <vector>

// The units the accuracy repair keeps float32 or lets go low: what a user recognises in the
// graph. Each Conv, ConvTranspose, MatMul or Gemm starts a unit, and so does any other node
// that computes in the low type and reads low values of several units (a residual Add);
// a node whose low inputs all come from one unit joins it (a Conv's bias, normalisation
// and activation: one fused op on an accelerator, and low exactly when the Conv is).
// If/Loop/Scan bodies are searched like the main graph.
namespace npucc::accuracy {

struct PrecisionUnit {
  std::vector<std::string> nodes; // node names, the matrix op first
  std::string op;                 // "Conv+Relu", "MatMul", ...
};

// The units of a low graph, in graph order (outer graph first, then each body in order):
// every named node other than Cast that reads or writes a float16/bfloat16 value.
std::vector<PrecisionUnit> low_precision_units(const onnx::ModelProto& low);

} // namespace npucc::accuracy
