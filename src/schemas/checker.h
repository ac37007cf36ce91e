#pragma once

#include <onnx/onnx_pb.h>

namespace npucc::schemas {

// ONNX's checker on `model`, with npucc's schema registry (registry.h) instead of ONNX
// 1.12's, so models up to IR 13 and opset 26 are checked node by node. Throws ONNX's
// ValidationError. External data is not opened (the caller resolves it).
void check_model(const onnx::ModelProto& model);

} // namespace npucc::schemas
