#pragma once

#include <onnx/onnx_pb.h>

// What ONNX 1.12 does not know about model-local functions, made visible to its checker
// and shape inference in the worker's copy of a model (isolated_worker.h), and taken out
// again before the copy goes back:
// - overload (IR 10): 1.12 finds a function by (domain, name) alone, so two overloads of
//   one name would share the first one's body. Each overloaded function and its calls get
//   a name of their own, "Name[overload=O]", for the duration.
// - attribute_proto (IR 9): 1.12 substitutes into a body only the attributes listed in
//   `attribute` and given by the call, so a default never reaches inference. The
//   function lists its attribute_proto names too, and calls get the defaults they lack.
namespace npucc::check {

// Throws npucc::Error naming the function for two functions with the same (domain,
// name, overload), and for a call to an overload the model does not define.
void expose_function_calls(onnx::ModelProto& model);
// Undoes expose_function_calls (idempotent; on any model).
void restore_function_calls(onnx::ModelProto& model);

} // namespace npucc::check
