#include "accuracy/sample_runner.h"

#include "accuracy/check.h"

namespace npucc::accuracy {

namespace {

// A batch's per-sample figures joined to the sets before it (their set indexes are the
// report's already: compare_sets was given the batch's first set).
void merge_into(Metrics& total, Metrics batch) {
  if (total.empty()) {
    total = std::move(batch);
    return;
  }
  for (size_t o = 0; o < total.size() && o < batch.size(); ++o) {
    for (auto& sample : batch[o].samples) {
      accuracy::merge(total[o], std::move(sample));
    }
  }
}

} // namespace

const std::vector<runtime::TensorSet>& SampleRunner::sets_of(
    std::pair<size_t, size_t> batch, std::vector<runtime::TensorSet>& read) const {
  if (m_samples.held()) { // one batch of every set
    return m_samples.sets; // held: run as they are, not copied
  }
  read = m_samples.load(batch.first, batch.second);
  return read;
}

void SampleRunner::say_progress(size_t batch, size_t batches, size_t sets_done) {
  if (!m_log || batches < 2 || (batch + 1) * 10 / batches == batch * 10 / batches) {
    return;
  }
  m_log("accuracy: " + std::to_string(sets_done) + "/" + std::to_string(m_samples.count()) +
        " " + m_what + " run");
}

Metrics SampleRunner::compare(const std::vector<runtime::TensorSet>& high,
                              const std::vector<runtime::TensorSet>& low, size_t first_set) const {
  Metrics out = accuracy::compare_sets(m_outputs, high, low, m_requests,
                                       static_cast<int64_t>(first_set));
  if (m_functions != nullptr) {
    m_functions->measure(m_outputs, high, low, static_cast<int64_t>(first_set), out);
  }
  return out;
}

Metrics SampleRunner::first_run(const runtime::GraphSource& high, const runtime::GraphSource& low,
                                bool keep_reference) {
  Metrics total;
  const auto batches = m_samples.batches();
  m_reference.clear();
  for (size_t b = 0; b < batches.size(); ++b) {
    std::vector<runtime::TensorSet> read;
    const auto& sets = sets_of(batches[b], read);
    auto results = m_runtime.run_each(
        {{m_high_name, high}, {m_low_name, low}}, sets, m_outputs);
    merge_into(total, compare(results[0], results[1], batches[b].first));
    if (keep_reference) {
      std::move(results[0].begin(), results[0].end(), std::back_inserter(m_reference));
    }
    say_progress(b, batches.size(), batches[b].second);
  }
  return total;
}

Metrics SampleRunner::measure(const std::string& what, const runtime::GraphSource& low) {
  Metrics total;
  const auto batches = m_samples.batches();
  for (size_t b = 0; b < batches.size(); ++b) {
    const auto [first, last] = batches[b];
    std::vector<runtime::TensorSet> read;
    const auto& sets = sets_of(batches[b], read);
    auto low_outputs = m_runtime.run(what, low, sets, m_outputs);
    if (first == 0 && last == m_reference.size()) {
      merge_into(total, compare(m_reference, low_outputs, 0));
    } else {
      const std::vector<runtime::TensorSet> reference(
          m_reference.begin() + static_cast<std::ptrdiff_t>(first),
          m_reference.begin() + static_cast<std::ptrdiff_t>(last));
      merge_into(total, compare(reference, low_outputs, first));
    }
    say_progress(b, batches.size(), last);
  }
  return total;
}

Metrics SampleRunner::ideal() const {
  return compare(m_reference, m_reference, 0);
}

} // namespace npucc::accuracy
