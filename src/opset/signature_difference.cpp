#include "opset/version_steps.h"

namespace npucc::opset {

namespace {

using Formals = std::vector<onnx::OpSchema::FormalParameter>;

bool widens(onnx::OpSchema::FormalParameterOption before,
            onnx::OpSchema::FormalParameterOption after) {
  return before == after || (before == onnx::OpSchema::Single && after == onnx::OpSchema::Optional);
}

// Same names in the same order, each slot taking at least its old types (a type
// parameter split in two, T -> T and T1, only loosens), an input made optional.
std::string formals_difference(const Formals& before, const Formals& after, const char* what) {
  if (before.size() != after.size()) {
    return std::string(what) + " count " + std::to_string(before.size()) + " -> " +
           std::to_string(after.size());
  }
  for (size_t i = 0; i < before.size(); ++i) {
    const auto& a = before[i];
    const auto& b = after[i];
    if (a.GetName() != b.GetName() || !widens(a.GetOption(), b.GetOption()) ||
        a.GetIsHomogeneous() != b.GetIsHomogeneous()) {
      return std::string(what) + " " + a.GetName() + " changed";
    }
    for (const auto& type : a.GetTypes()) {
      if (b.GetTypes().count(type) == 0) {
        return std::string(what) + " " + a.GetName() + " no longer takes " + *type;
      }
    }
  }
  // Slots that must agree now must have agreed before (a new tie would narrow).
  for (size_t i = 0; i < after.size(); ++i) {
    for (size_t j = i + 1; j < after.size(); ++j) {
      if (after[i].GetTypeStr() == after[j].GetTypeStr() &&
          before[i].GetTypeStr() != before[j].GetTypeStr()) {
        return std::string(what) + "s " + after[i].GetName() + " and " + after[j].GetName() +
               " now share a type";
      }
    }
  }
  return {};
}

std::string attributes_difference(const onnx::OpSchema& before, const onnx::OpSchema& after) {
  const auto& a = before.attributes();
  const auto& b = after.attributes();
  for (const auto& [name, attribute] : a) {
    auto it = b.find(name);
    if (it == b.end()) {
      return "attribute " + name + " removed";
    }
    if (it->second.type != attribute.type || it->second.required != attribute.required ||
        it->second.default_value.SerializeAsString() !=
            attribute.default_value.SerializeAsString()) {
      return "attribute " + name + " changed";
    }
  }
  for (const auto& [name, attribute] : b) {
    if (a.count(name) == 0) {
      return "attribute " + name + " added";
    }
  }
  return {};
}

} // namespace

std::string signature_difference(const onnx::OpSchema& before, const onnx::OpSchema& after) {
  if (after.Deprecated()) {
    return "deprecated";
  }
  for (const auto& difference : {formals_difference(before.inputs(), after.inputs(), "input"),
                                 formals_difference(before.outputs(), after.outputs(), "output"),
                                 attributes_difference(before, after)}) {
    if (!difference.empty()) {
      return difference;
    }
  }
  return {};
}

} // namespace npucc::opset
