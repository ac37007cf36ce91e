#pragma once

#include "passes/pass.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace npucc::passes {

struct PassReport {
  std::string name;
  std::string unit;
  int64_t changed = 0;
};

enum class FixedPoint { no, yes };

// Whether any pass of a run changed something.
bool any_changed(const std::vector<PassReport>& reports);
// Adds the counts of a later run of the same passes to `total`.
void add_reports(std::vector<PassReport>& total, const std::vector<PassReport>& more);

// Runs passes over a model: graph passes on every graph (main graph first, then each
// body, recursively), model passes once. With FixedPoint::yes the whole list repeats
// until a round changes nothing (bounded). `log` receives "pass X changed N ..." lines.
class PassManager {
public:
  explicit PassManager(std::vector<std::unique_ptr<Pass>> passes) : m_passes(std::move(passes)) {}

  std::vector<PassReport> run(onnx::ModelProto& model, FixedPoint fixed_point = FixedPoint::yes,
                              const std::function<void(const std::string&)>& log = {});

  // Runs one pass once; the count of changes over all graphs.
  static int64_t run_pass(Pass& pass, onnx::ModelProto& model);

private:
  std::vector<std::unique_ptr<Pass>> m_passes;
};

} // namespace npucc::passes
