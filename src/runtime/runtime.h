#pragma once

#include "runtime/tensor.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

// Running a graph: npucc's floor under accuracy checks (accuracy/). A graph is an ONNX
// model serialised whole (its weights inside), run on one or more input sets, each giving
// the named outputs. The one implementation is ONNX Runtime's C API in a child process
// (runtime_process.cpp): a crash of the runtime is one error line, not npucc's death.
namespace npucc::runtime {

// A graph to run: a serialised ModelProto (its weights inside), or an .onnx file ONNX
// Runtime reads itself (its external data beside it). A file spares a large graph the trip
// through npucc's channel: no serialised copy in npucc, none in the runtime's process
// before ONNX Runtime's own, and no 2 GiB limit.
struct GraphSource {
  GraphSource(std::string serialised) : bytes(std::move(serialised)) {} // NOLINT: implicit
  static GraphSource in_file(std::string path) {
    GraphSource source{std::string()};
    source.file = std::move(path);
    return source;
  }
  std::string bytes;
  std::string file; // used when not empty
};

// A reduction of two graphs' outputs, pair by pair, run inside the runtime process where
// ONNX Runtime wrote them, one input set at a time: the values never cross npucc's channel
// (a drift report's values weigh 659 MiB per set and graph on ppocrv4_det at 640x640, and
// each copy of fresh memory costs page faults). Knows nothing of what is folded: a fold is
// registered by name (register_pair_fold) and made afresh per run.
class PairFold {
public:
  virtual ~PairFold() = default;
  // One input set's outputs of the two graphs, in the run's output order. Throws
  // npucc::Error (one line, sent back as the run's error).
  virtual void fold(const std::vector<TensorView>& a, const std::vector<TensorView>& b) = 0;
  // What the run returns to npucc once every set is folded.
  virtual std::string result() = 0;
};

// Makes a fold; `a_what` and `b_what` name the two graphs in its errors.
using PairFoldMaker = std::unique_ptr<PairFold> (*)(const std::string& a_what,
                                                   const std::string& b_what);

// Registers `maker` under `name`; called at static initialisation, so that the runtime
// process, a fork of npucc, finds it there too. Returns true (for a static's initialiser).
bool register_pair_fold(const std::string& name, PairFoldMaker maker);
// A new fold of the one registered under `name`. Throws npucc::Error when none is.
std::unique_ptr<PairFold> make_pair_fold(const std::string& name, const std::string& a_what,
                                         const std::string& b_what);

class GraphRuntime {
public:
  virtual ~GraphRuntime() = default;

  // The runtime's name and version ("ONNX Runtime 1.30.0"): part of what a result depends on.
  virtual std::string version() = 0;

  // Runs `graph` once per input set; the outputs named `outputs`, in that order, per set.
  // `what` names the graph in messages ("the emulation graph"). Throws npucc::Error with
  // the runtime's message in one line.
  virtual std::vector<TensorSet> run(const std::string& what, const GraphSource& graph,
                                     const std::vector<TensorSet>& inputs,
                                     const std::vector<std::string>& outputs) = 0;

  // Runs each graph on every input set: result[g][set]. A pool
  // runs them at once, one graph per process, so each graph's session is made once (run()
  // instead shares one graph's sets out, which makes a session per process).
  struct Graph {
    std::string what;
    GraphSource source;
  };
  virtual std::vector<std::vector<TensorSet>> run_each(const std::vector<Graph>& graphs,
                                                       const std::vector<TensorSet>& inputs,
                                                       const std::vector<std::string>& outputs);

  // Runs graphs `a` and `b` on every input set in one runtime process, both at once (a
  // session and a thread each), and folds each set's outputs named `outputs` (the same names
  // in both) with a new fold of the registered `fold` there, holding one set's values at a
  // time: the fold's result. Throws npucc::Error as run() does, and for a fold not
  // registered. This default runs the graphs through run_each, a set at a time, and folds
  // here: the same result, the values copied across.
  virtual std::string run_folded(const std::string& fold, const Graph& a, const Graph& b,
                                 const std::vector<TensorSet>& inputs,
                                 const std::vector<std::string>& outputs);

  // Starts again a runtime a crash stopped; run() would, but a pool calls this first from
  // its own thread, since forking while other threads run is unsafe.
  virtual void restart_if_stopped() {}
};

// ONNX Runtime in `processes` child processes forked now, which the returned object ends
// and waits for when it is destroyed. With more than one, a run's input sets are shared out
// among them and run at once: each set still runs on one thread in one session, so the
// outputs are the same bits however many there are. The children load the library while
// the caller goes on; the first version() or run() waits for them and throws npucc::Error
// in one line when npucc was built without ONNX Runtime, or its library cannot be loaded or
// lacks C API version 29.
std::unique_ptr<GraphRuntime> start_runtime(size_t processes = 1);

} // namespace npucc::runtime
