#pragma once
// Helpers shared by the pass tests (test_passes_*.cpp).

#include "passes/pass_manager.h"
#include "schemas/checker.h"
#include "test_support.h"

#include <doctest/doctest.h>
#include <string>
#include <vector>

namespace npucc::test {

// Fails the test when ONNX's checker rejects the model (with npucc's schemas, so opsets
// 18 to 26 are checked against their own operator versions).
inline void check_valid(const onnx::ModelProto& model) {
  std::string problem;
  try {
    schemas::check_model(model);
  } catch (const std::exception& e) {
    problem = e.what();
  }
  INFO(problem);
  CHECK(problem.empty());
}

// The IR version of the ONNX release that introduced `opset` (IR.md, versions table), for
// test models at that opset.
inline int ir_version_for(int opset) {
  if (opset <= 18) {
    return 8;
  }
  if (opset <= 20) {
    return 9;
  }
  if (opset <= 22) {
    return 10;
  }
  return opset == 23 ? 11 : (opset == 24 ? 12 : 13);
}

inline int64_t run(passes::Pass& pass, onnx::ModelProto& model) {
  return passes::PassManager::run_pass(pass, model);
}

inline int count_ops(const onnx::GraphProto& graph, const std::string& op_type) {
  int count = 0;
  for (const auto& node : graph.node()) {
    count += node.op_type() == op_type ? 1 : 0;
  }
  return count;
}

inline std::vector<std::string> inputs_of(const onnx::NodeProto& node) {
  return {node.input().begin(), node.input().end()};
}

inline const onnx::NodeProto* find_op(const onnx::GraphProto& graph, const std::string& op_type) {
  for (const auto& node : graph.node()) {
    if (node.op_type() == op_type) {
      return &node;
    }
  }
  return nullptr;
}

inline bool has_initializer(const onnx::GraphProto& graph, const std::string& name) {
  for (const auto& tensor : graph.initializer()) {
    if (tensor.name() == name) {
      return true;
    }
  }
  return false;
}

inline bool has_value_info(const onnx::GraphProto& graph, const std::string& name) {
  for (const auto& info : graph.value_info()) {
    if (info.name() == name) {
      return true;
    }
  }
  return false;
}

} // namespace npucc::test
