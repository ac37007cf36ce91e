#include "runtime/runtime.h"

#include "util/parallel.h"

#include <algorithm>

// Several runtime processes sharing out one run's input sets: the accuracy repair runs every
// candidate graph on every sample, and on two cores two samples run at once in two sessions.
namespace npucc::runtime {

namespace detail {
std::unique_ptr<GraphRuntime> start_runtime_process(); // runtime_process.cpp
} // namespace detail

namespace {

class RuntimePool : public GraphRuntime {
public:
  explicit RuntimePool(size_t processes) {
    for (size_t i = 0; i < processes; ++i) {
      m_members.push_back(detail::start_runtime_process());
    }
  }

  std::string version() override { return m_members.front()->version(); }

  std::vector<TensorSet> run(const std::string& what, const std::string& model,
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
      results[m] = m_members[m]->run(what, model, {first, last}, outputs);
    });
    std::vector<TensorSet> out;
    for (auto& part : results) {
      std::move(part.begin(), part.end(), std::back_inserter(out));
    }
    return out;
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

std::unique_ptr<GraphRuntime> start_runtime(size_t processes) {
  if (processes <= 1) {
    return detail::start_runtime_process();
  }
  return std::make_unique<RuntimePool>(processes);
}

} // namespace npucc::runtime
