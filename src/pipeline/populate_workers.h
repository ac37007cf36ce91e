#pragma once

#include "npucc/cache.h"

#include <functional>
#include <string>
#include <vector>

// `cache populate -j N`: the compiles run in forked worker processes, not threads.
// Each process forks a worker for ONNX's checker and shape inference
// (check/isolated_worker.h); a fork taken while another thread holds a lock (the
// allocator's, protobuf's, ONNX's) hands the child a lock nobody will release, and it
// waits forever. Single-threaded workers fork safely, and do not share an allocator.
// ONNX's schema registry is built once, before the workers are forked.
namespace npucc::pipeline {

// Whether the shared remote cache is known to be down: the first worker that finds it
// down tells the parent, which tells every worker with its next model, so a run pays
// about one timeout per worker at most, not one per model.
enum class RemoteState { up, down };

struct WorkerReply {
  PopulateItem item; // item.model is not sent: the parent knows it
  RemoteState remote = RemoteState::up;
  // Set by the parent when the worker died or sent garbage: item.detail says how, and
  // does not name the model yet.
  bool worker_lost = false;
};

// Compiles model `index` into the cache; never throws (a failure is item.failed).
// Runs in a worker process, or in the calling process when workers cannot be used.
using CompileOne = std::function<WorkerReply(size_t index, RemoteState remote)>;
// Called in the calling process, once per model, in completion order.
using ItemDone = std::function<void(size_t index, const WorkerReply& reply)>;

// Runs compile(0..count-1) in up to `workers` forked processes, each compiling one
// model at a time and sending its result back through a socket. A worker that dies
// (a signal, a crash) turns its model into one failed item (worker_lost) saying how it
// died, and a fresh worker takes the remaining models. Workers die with the calling
// process (PR_SET_PDEATHSIG), so Ctrl-C or a kill of it stops them.
// The calling process must be single-threaded: with another thread alive, or with
// workers <= 1, every model is compiled here, one after the other.
void compile_in_workers(size_t count, unsigned workers, const CompileOne& compile,
                        const ItemDone& done);

} // namespace npucc::pipeline
