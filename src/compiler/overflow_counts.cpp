#include "compiler/overflow_counts.h"

#include "precision/overflow_prescan.h"

namespace npucc::compiler {

OverflowCounts::OverflowCounts(const onnx::ModelProto& model)
    : m_prescan(std::make_unique<precision::OverflowPrescan>(model)) {}

OverflowCounts::~OverflowCounts() = default;

util::FileObserver& OverflowCounts::observer() {
  return *m_prescan;
}

void OverflowCounts::speculate() {
  m_assumption = std::make_unique<precision::OverflowAssumption>();
}

bool OverflowCounts::speculation_held() {
  bool held = !m_assumption || m_assumption->holds();
  m_assumption.reset();
  return held;
}

precision::OverflowSource OverflowCounts::source() const {
  return {m_prescan.get(), m_assumption.get()};
}

} // namespace npucc::compiler
