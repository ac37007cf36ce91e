#include "output/graph_writer.h"
#include "output/manifest.h"
#include "output/output_folder.h"
#include "compiler/prepared_compile.h"
#include "util/file_io.h"
#include "util/parallel.h"
#include "util/test_point.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

namespace npucc {

// The graphs to write, one job each: by default every graph of a compile together, so
// that they share one copy of each weight (output::write_graphs_sharing_weights); with
// --self-contained, high and low together when they share their weights
// (output::GraphPairWriter), any other graph on its own.
struct WriteJob {
  size_t first = 0;
  std::optional<size_t> second;
  std::unique_ptr<output::GraphPairWriter> pair;
  bool all_sharing_weights = false;
};

struct GraphWriting::State {
  PreparedCompile prepared;
  std::optional<output::OutputFolder> output;
  ExternalData external_data = ExternalData::automatic;
  WeightLayout weight_layout = WeightLayout::shared;
  std::vector<output::WrittenGraph> written;
  std::vector<WriteJob> jobs; // after `prepared`, whose models a pair holds: gone first
  output::WriteControl control;
  uint64_t bytes_total = 0; // about: the progress's measure
  std::exception_ptr failure;
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;  // the runner is through the jobs
  std::thread runner; // runs util::parallel_for over the jobs

  bool sharing_weights() const {
    return weight_layout == WeightLayout::shared && prepared.variants.graphs.size() > 1;
  }

  void plan_jobs() {
    auto& graphs = prepared.variants.graphs;
    if (sharing_weights()) {
      jobs.push_back({0, std::nullopt, nullptr, true});
      return;
    }
    auto index_of = [&](const std::string& role) -> std::optional<size_t> {
      for (size_t i = 0; i < graphs.size(); ++i) {
        if (graphs[i].role == role) {
          return i;
        }
      }
      return std::nullopt;
    };
    auto high = index_of("high");
    auto low = index_of("low");
    if (high && low) {
      auto pair = output::GraphPairWriter::plan(graphs[*high].model, graphs[*low].model,
                                                  output->staging(), "high.onnx", "low.onnx",
                                                  external_data);
      if (pair) {
        jobs.push_back({*high, *low, std::move(pair)});
      }
    }
    bool paired = !jobs.empty();
    for (size_t i = 0; i < graphs.size(); ++i) {
      if (!paired || (i != *high && i != *low)) {
        jobs.push_back({i, std::nullopt, nullptr});
      }
    }
  }

  // Writing (and hashing) the graphs is most of a compile's time.
  void write(size_t k) {
    try {
      WriteJob& job = jobs[k];
      if (job.all_sharing_weights) {
        write_sharing_weights();
      } else if (job.pair) {
        auto [first, second] = job.pair->write(&control);
        written[job.first] = std::move(first);
        written[*job.second] = std::move(second);
      } else {
        auto& variant = prepared.variants.graphs[job.first];
        written[job.first] = output::write_graph(variant.model, output->staging(),
                                                   variant.role + ".onnx", external_data, &control);
      }
    } catch (...) {
      control.stop = true; // the others stop within a buffer's worth
      throw;
    }
  }

  void write_sharing_weights() {
    std::vector<output::GraphToWrite> graphs;
    for (auto& variant : prepared.variants.graphs) {
      graphs.push_back({&variant.model, variant.role + ".onnx"});
    }
    written = output::write_graphs_sharing_weights(graphs, output->staging(), &control);
  }

  void run() {
    try {
      util::parallel_for(jobs.size(), [this](size_t k) { write(k); });
    } catch (...) {
      failure = std::current_exception(); // read after join()
    }
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
    finished.notify_all();
  }

  // Waits for the runner, telling `progress` of the bytes written meanwhile.
  void wait(const WriteProgress& progress) {
    if (progress) {
      for (;;) {
        {
          std::unique_lock<std::mutex> lock(mutex);
          if (finished.wait_for(lock, k_progress_interval, [this] { return done; })) {
            break;
          }
        }
        uint64_t bytes = control.bytes_written.load(std::memory_order_relaxed);
        progress(bytes, std::max(bytes, bytes_total));
      }
    }
    join();
    if (progress && !failure) {
      uint64_t bytes = control.bytes_written.load(std::memory_order_relaxed);
      progress(bytes, bytes);
    }
  }

  void join() {
    if (runner.joinable()) {
      runner.join();
    }
  }

  static constexpr auto k_progress_interval = std::chrono::milliseconds(100);
};

namespace {

// The same bytes in low.onnx as in high.onnx: the low graph is no result, whatever made it
// so (a mixlist that lists nothing low, a model already in the low type); the report says.
void warn_if_low_is_high(const std::vector<CompiledGraph>& graphs, nlohmann::json& report) {
  const CompiledGraph* high = nullptr;
  const CompiledGraph* low = nullptr;
  for (const auto& graph : graphs) {
    if (graph.role == "high") {
      high = &graph;
    } else if (graph.role == "low") {
      low = &graph;
    }
  }
  if (high == nullptr || low == nullptr || !report.is_object() ||
      high->graph.sha256 != low->graph.sha256 ||
      high->external_data.size() != low->external_data.size()) {
    return;
  }
  for (size_t i = 0; i < high->external_data.size(); ++i) {
    if (high->external_data[i].sha256 != low->external_data[i].sha256) {
      return;
    }
  }
  report["warnings"].push_back("low.onnx is byte for byte high.onnx: switching graphs during "
                               "training changes nothing");
}

} // namespace

GraphWriting::GraphWriting(PreparedCompile prepared, const CompileOptions& options)
    : m_state(std::make_unique<State>()) {
  State& state = *m_state;
  state.prepared = std::move(prepared);
  state.output.emplace(options);
  state.external_data = options.external_data;
  state.weight_layout = options.weight_layout;
  size_t graphs = state.prepared.variants.graphs.size();
  // Before the threads: a failure here leaves nothing running.
  state.written.resize(graphs);
  for (auto& variant : state.prepared.variants.graphs) { // before a pair takes the weights
    uint64_t bytes = output::graph_file_bytes(variant.model);
    // Shared weights are written once: about the largest graph's bytes in all.
    state.bytes_total =
        state.sharing_weights() ? std::max(state.bytes_total, bytes) : state.bytes_total + bytes;
  }
  state.plan_jobs();
  state.runner = std::thread([&state] { state.run(); });
}

GraphWriting::~GraphWriting() {
  if (m_state) {
    m_state->control.stop = true;
    m_state->join();
  }
}

PreparedCompile GraphWriting::abandon() {
  m_state->control.stop = true;
  m_state->join();
  m_state->jobs.clear();   // gives the pairs' initializers back
  m_state->output.reset(); // removes the staging folder
  return std::move(m_state->prepared);
}

WrittenCompile GraphWriting::finish(const CompileOptions& options, const CacheKey& cache_key,
                                    const WriteProgress& progress,
                                    const std::string& model_sha256) {
  State& state = *m_state;
  state.wait(progress);
  util::test_point("write:joined");
  state.jobs.clear();
  if (state.failure) {
    std::rethrow_exception(state.failure);
  }
  WrittenCompile out;
  CompileResult& result = out.result;
  result = std::move(state.prepared.result);
  if (!model_sha256.empty()) {
    result.model_sha256 = model_sha256;
    state.prepared.model.sha256 = model_sha256;
  }
  auto& variants = state.prepared.variants;
  for (size_t i = 0; i < variants.graphs.size(); ++i) {
    state.written[i].role = variants.graphs[i].role;
    state.written[i].precision = variants.graphs[i].precision;
    state.written[i].emulates = variants.graphs[i].emulates;
    state.written[i].ir_version = variants.graphs[i].model.ir_version();
    for (const auto& opset : variants.graphs[i].model.opset_import()) {
      state.written[i].opsets[opset.domain().empty() ? "ai.onnx" : opset.domain()] =
          opset.version();
    }
  }
  for (auto& graph : state.written) {
    out.written_as.insert(graph.written_as.begin(), graph.written_as.end());
    result.graphs.push_back(std::move(static_cast<CompiledGraph&>(graph)));
  }
  warn_if_low_is_high(result.graphs, variants.report);
  if (!variants.report.is_null()) {
    result.precision_report = variants.report.dump();
  }
  if (!variants.high_report.is_null()) {
    result.high_precision_report = variants.high_report.dump();
  }
  util::test_point("write:graphs-written");
  if (!result.drift_report.empty()) {
    util::write_file_atomic(state.output->staging() / output::k_drift_report_file,
                            result.drift_report);
  }
  auto manifest = output::build_manifest(options, state.prepared.model, result, cache_key);
  util::write_file_atomic(state.output->staging() / "manifest.json",
                          manifest.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
                              "\n");
  util::test_point("write:manifest-staged");
  state.output->publish();
  result.manifest_path = options.output_dir / "manifest.json";
  return out;
}

} // namespace npucc
