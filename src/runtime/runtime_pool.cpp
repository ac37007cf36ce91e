#include "runtime/runtime.h"

#include "npucc/error.h"
#include "util/parallel.h"

#include <algorithm>
#include <map>
#include <mutex>

// Several runtime processes sharing out one run's input sets: the accuracy repair runs every
// candidate graph on every sample, and on two cores two samples run at once in two sessions.
namespace npucc::runtime {

namespace detail {
std::vector<std::unique_ptr<GraphRuntime>> start_runtime_processes(size_t count); // runtime_process.cpp
} // namespace detail

namespace {

class RuntimePool : public GraphRuntime {
public:
  explicit RuntimePool(size_t processes) : m_members(detail::start_runtime_processes(processes)) {}

  std::string version() override { return m_members.front()->version(); }

  std::vector<TensorSet> run(const std::string& what, const GraphSource& graph,
                             const std::vector<TensorSet>& inputs,
                             const std::vector<std::string>& outputs) override {
    const size_t used = std::max<size_t>(1, std::min(m_members.size(), inputs.size()));
    for (size_t m = 0; m < used; ++m) {
      m_members[m]->restart_if_stopped();
    }
    // Member m runs sets [m * count / used, (m + 1) * count / used): contiguous, in order.
    std::vector<std::vector<TensorSet>> results(used);
    util::parallel_for(used, [&](size_t m) {
      const auto first = inputs.begin() + static_cast<std::ptrdiff_t>(m * inputs.size() / used);
      const auto last = inputs.begin() + static_cast<std::ptrdiff_t>((m + 1) * inputs.size() / used);
      results[m] = m_members[m]->run(what, graph, {first, last}, outputs);
    });
    std::vector<TensorSet> out;
    for (auto& part : results) {
      std::move(part.begin(), part.end(), std::back_inserter(out));
    }
    return out;
  }

  std::vector<std::vector<TensorSet>> run_each(const std::vector<Graph>& graphs,
                                               const std::vector<TensorSet>& inputs,
                                               const std::vector<std::string>& outputs) override {
    if (graphs.size() < 2) {
      return GraphRuntime::run_each(graphs, inputs, outputs);
    }
    restart_if_stopped();
    const size_t used = std::min(m_members.size(), graphs.size());
    std::vector<std::vector<TensorSet>> results(graphs.size());
    util::parallel_for(used, [&](size_t m) {
      for (size_t g = m; g < graphs.size(); g += used) {
        results[g] = m_members[m]->run(graphs[g].what, graphs[g].source, inputs, outputs);
      }
    });
    return results;
  }

  // One member: it runs the two graphs at once itself, so each graph's session is made once.
  std::string run_folded(const std::string& fold, const Graph& a, const Graph& b,
                         const std::vector<TensorSet>& inputs,
                         const std::vector<std::string>& outputs) override {
    m_members.front()->restart_if_stopped();
    return m_members.front()->run_folded(fold, a, b, inputs, outputs);
  }

  void restart_if_stopped() override {
    for (auto& member : m_members) {
      member->restart_if_stopped();
    }
  }

private:
  std::vector<std::unique_ptr<GraphRuntime>> m_members;
};

} // namespace

std::vector<std::vector<TensorSet>> GraphRuntime::run_each(const std::vector<Graph>& graphs,
                                                           const std::vector<TensorSet>& inputs,
                                                           const std::vector<std::string>& outputs) {
  std::vector<std::vector<TensorSet>> results;
  for (const auto& graph : graphs) {
    results.push_back(run(graph.what, graph.source, inputs, outputs));
  }
  return results;
}

namespace {

struct PairFolds {
  std::mutex mutex;
  std::map<std::string, PairFoldMaker> makers;
};
PairFolds& pair_folds() {
  static PairFolds folds;
  return folds;
}

PairFoldMaker find_pair_fold(const std::string& name) {
  auto& folds = pair_folds();
  std::lock_guard<std::mutex> lock(folds.mutex);
  auto found = folds.makers.find(name);
  return found == folds.makers.end() ? nullptr : found->second;
}

} // namespace

bool register_pair_fold(const std::string& name, PairFoldMaker maker) {
  auto& folds = pair_folds();
  std::lock_guard<std::mutex> lock(folds.mutex);
  folds.makers[name] = maker;
  return true;
}

std::unique_ptr<PairFold> make_pair_fold(const std::string& name, const std::string& a_what,
                                         const std::string& b_what) {
  const PairFoldMaker maker = find_pair_fold(name);
  if (maker == nullptr) {
    throw Error("internal error: no fold named '" + name + "' is registered with the runtime",
                "please report this");
  }
  return maker(a_what, b_what);
}

std::string GraphRuntime::run_folded(const std::string& fold, const Graph& a, const Graph& b,
                                     const std::vector<TensorSet>& inputs,
                                     const std::vector<std::string>& outputs) {
  auto folding = make_pair_fold(fold, a.what, b.what);
  for (const auto& set : inputs) {
    const auto results = run_each({a, b}, {set}, outputs);
    std::vector<TensorView> a_views, b_views;
    for (const auto& tensor : results[0].at(0)) {
      a_views.push_back(view_of(tensor));
    }
    for (const auto& tensor : results[1].at(0)) {
      b_views.push_back(view_of(tensor));
    }
    folding->fold(a_views, b_views);
  }
  return folding->result();
}

std::unique_ptr<GraphRuntime> start_runtime(size_t processes) {
  if (processes <= 1) {
    return std::move(detail::start_runtime_processes(1).front());
  }
  return std::make_unique<RuntimePool>(processes);
}

} // namespace npucc::runtime
