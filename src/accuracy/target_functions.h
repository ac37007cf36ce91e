#pragma once

#include "accuracy/metrics.h"
#include "accuracy/target.h"
#include "npucc/compile.h"
#include "runtime/tensor.h"

#include <string>
#include <vector>

// The caller's functions an --accuracy-target names (check[LABEL], score[LABEL]:
// npucc/compile.h, AccuracyFunction), run on each sample set beside the figures, their values
// kept as an entry of their own after the outputs' (accuracy::OutputMetrics::function), so
// the target, the repair's ranking and the report judge them as they judge a figure.
namespace npucc::accuracy {

class AccuracyFunctions {
public:
  // Throws usage_error for a clause whose function was not given (a CLI user's check[...])
  // and for a function no clause names.
  AccuracyFunctions(const std::vector<AccuracyFunction>& given,
                    const accuracy::AccuracyTarget& target);

  // Appends an entry per function to `metrics`, its value on each set of the batch (the
  // report's sets first_set, first_set + 1, ...). `outputs`: the output names, in the sets'
  // order. Throws npucc::Error naming the function and the set when it throws.
  void measure(const std::vector<std::string>& outputs,
               const std::vector<runtime::TensorSet>& high,
               const std::vector<runtime::TensorSet>& low, int64_t first_set,
               std::vector<accuracy::OutputMetrics>& metrics) const;

  bool empty() const { return m_functions.empty(); }

private:
  struct Named {
    const AccuracyFunction* function;
    std::string metric; // check[LABEL] / score[LABEL]
    bool higher_is_better = true;
  };
  std::vector<Named> m_functions;
};

// Throws usage_error when --accuracy-target names a function the options do not hold, or the
// options hold one it does not name (AccuracyFunctions' checks, before any cache lookup).
void check_accuracy_functions(const CompileOptions& options);

} // namespace npucc::accuracy
