#pragma once

#include <onnx/onnx_pb.h>
#include <string>

// Debian's libonnx 1.12 crashes in several ops' inference functions on malformed models
// the checker accepts (RNN and ConvTranspose read dims past an input's rank or of a
// missing input). A crash is a crash for the user, and those cases cannot all be
// foreseen, so the checker and inference run in a separate process: one worker per npucc
// process, forked once and sent each model over a socket. A compile validates several
// times; a fork each time cost tens of milliseconds, and every page either process
// wrote afterwards took a copy-on-write fault. A worker that dies is reported as an
// InferenceCrash; the next request forks a new one.
namespace npucc::check {

enum class IsolatedRequest : char {
  check = 'C',           // ONNX's checker
  infer = 'I',           // shape inference, argument = the options
  check_and_infer = 'K', // check_and_infer's first attempt, argument = the Checker
};

// Forks the worker now unless one is running: a compile calls it first, while the
// process is small and before it starts threads.
void start_isolated_worker();

// Ends this process's worker, if it has one, and waits for it: before the process exits
// (npucc ends with _exit(), which would leave it unreaped).
void stop_isolated_worker();

// Builds ONNX's schema registry now (some 30 ms of CPU, once per process): called before
// a fork, every child inherits it built (cache populate's workers).
void warm_onnx_schemas();

// Sends `model` with `request` and `argument` to the worker and returns its reply: "0" +
// the payload, or "1" + an error line. Raw data of 64 KiB or more stays here (the worker
// sees such tensors as weight-table references, as it sees the table's own); `model` is
// as it was on return. Throws InferenceCrash naming `what` when the worker dies.
std::string run_isolated(const std::string& what, IsolatedRequest request,
                         const std::string& argument, onnx::ModelProto& model);

// The worker's side, in validate.cpp: the payload for one request (throws for "1").
std::string answer_isolated(IsolatedRequest request, const std::string& argument,
                            onnx::ModelProto& model);

} // namespace npucc::check
