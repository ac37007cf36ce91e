#pragma once

#include "npucc/compile.h"
#include "npucc/error.h"

#include <onnx/onnx_pb.h>

namespace npucc::check {

// Fixes graph input dims from --input-shape. Unknown names, a wrong rank, or a dim that
// contradicts a fixed one are errors naming the input.
void apply_input_shapes(onnx::ModelProto& model, const std::vector<InputShape>& shapes);

// ONNX crashed (a signal in the isolated child) on the model or a graph derived from it:
// not retried, since the same model would crash the same way, and not npucc's bug even
// when the graph was one the passes produced (ONNX 1.12 reads malformed attributes
// blindly, and whether that crashes depends on the memory it happens to read).
class InferenceCrash : public Error {
public:
  using Error::Error;
};

// ONNX's checker; throws npucc::Error with its first line. Runs in the ONNX worker
// process (isolated_worker.h); `model` is as it was on return.
void check_model(onnx::ModelProto& model);

// ONNX's shape inference in strict mode with types checked, folding the inferred
// types into value_info. Throws npucc::Error with the first failing node.
void infer_shapes_strict(onnx::ModelProto& model);

// Whether check_and_infer runs ONNX's checker before inference, and on its result.
enum class Checker { none, before, after, before_and_after };

// The checker and strict inference (as the two functions above, same errors) in one
// isolated child instead of one each.
void check_and_infer(onnx::ModelProto& model, Checker checker);

// The same, but never throws: best-effort types for `inspect` on models that fail.
void infer_shapes_lenient(onnx::ModelProto& model);

} // namespace npucc::check
