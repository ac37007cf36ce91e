#pragma once

#include "accuracy/metrics.h"
#include "accuracy/samples.h"
#include "accuracy/target_functions.h"
#include "npucc/compile.h"
#include "runtime/runtime.h"

#include <string>
#include <utility>
#include <vector>

// Graphs run on a Samples' sets a batch at a time (accuracy/samples.h: held sets in one
// batch, larger samples read again per batch), so a check's memory is the runtime's
// sessions plus a batch of sets, whatever their number. The metrics are merged over the
// batches as over the sets (accuracy/metrics.h).
namespace npucc::accuracy {

using Metrics = std::vector<accuracy::OutputMetrics>;

class SampleRunner {
public:
  // `what` names the sets in progress lines ("sample sets", "validation sets").
  // `requests`: the figures beyond the fixed ones a target names (iou@T, close[...]).
  // `functions`: the caller's a target names (their values follow the outputs'), or null.
  SampleRunner(runtime::GraphRuntime& runtime, const accuracy::Samples& samples,
               const std::vector<std::string>& outputs, accuracy::FigureRequests requests,
               std::string what, LogSink log, const AccuracyFunctions* functions = nullptr)
      : m_runtime(runtime), m_samples(samples), m_outputs(outputs),
        m_requests(std::move(requests)), m_what(std::move(what)), m_log(std::move(log)),
        m_functions(functions) {}

  // The high graph and the low side at once (GraphRuntime::run_each): the low side's
  // metrics. With `keep_reference`, the high graph's outputs are kept for measure().
  Metrics first_run(const runtime::GraphSource& high, const runtime::GraphSource& low,
                    bool keep_reference);
  // Another low side against the kept high outputs.
  Metrics measure(const std::string& what, const runtime::GraphSource& low);
  // The kept high outputs against themselves: the figures a perfect low side would get
  // (accuracy::check_judgeable: a target the high graph alone leaves undefined).
  Metrics ideal() const;

  // How first_run's messages name the two graphs (npucc compare: "the reference", "the
  // candidate's emulation"); by default the compile's high graph and low graph's emulation.
  void name_graphs(std::string high, std::string low) {
    m_high_name = std::move(high);
    m_low_name = std::move(low);
  }

  int64_t sets() const { return static_cast<int64_t>(m_samples.count()); }
  const accuracy::Samples& samples() const { return m_samples; }

private:
  // A batch's sets: the held ones themselves, else read now into `read`.
  const std::vector<runtime::TensorSet>& sets_of(std::pair<size_t, size_t> batch,
                                                 std::vector<runtime::TensorSet>& read) const;
  // The outputs' figures on a batch, then the functions' values.
  Metrics compare(const std::vector<runtime::TensorSet>& high,
                  const std::vector<runtime::TensorSet>& low, size_t first_set) const;
  // Progress for a pass of several batches: at most about ten lines.
  void say_progress(size_t batch, size_t batches, size_t sets_done);

  runtime::GraphRuntime& m_runtime;
  const accuracy::Samples& m_samples;
  const std::vector<std::string>& m_outputs;
  accuracy::FigureRequests m_requests;
  std::string m_what;
  LogSink m_log;
  std::string m_high_name = "the high graph";
  std::string m_low_name = "the emulation of the low graph";
  const AccuracyFunctions* m_functions;
  std::vector<runtime::TensorSet> m_reference; // the high graph's outputs per set
};

} // namespace npucc::accuracy
