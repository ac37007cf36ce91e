#include "check/function_calls.h"

#include "model/graph_walk.h"
#include "model/ir_fields.h"
#include "npucc/error.h"
#include "schemas/registry.h"

#include <functional>
#include <map>
#include <set>
#include <utility>

namespace npucc::check {

namespace {

const std::string k_overload_mark = "[overload=";
// Marks a default copied to a call site, so restore_function_calls takes out exactly those.
const std::string k_default_mark = "npucc: attribute_proto default";

using Key = std::pair<std::string, std::string>; // domain ("" for ai.onnx), name

std::string mangled(const std::string& name, const std::string& overload) {
  return name + k_overload_mark + overload + "]";
}

std::string demangled(const std::string& name) {
  auto at = name.find(k_overload_mark);
  return at == std::string::npos || name.back() != ']' ? name : name.substr(0, at);
}

bool is_mangled(const onnx::ModelProto& model) {
  for (const auto& function : model.functions()) {
    if (demangled(function.name()) != function.name()) {
      return true;
    }
  }
  return false;
}

std::string describe(const Key& key, const std::string& overload) {
  return "function \"" + (key.first.empty() ? "" : key.first + ".") + key.second + "\"" +
         (overload.empty() ? "" : " overload \"" + overload + "\"");
}

// Every node of the model that may call a function: graphs (any depth) and function bodies.
void for_each_call_site(onnx::ModelProto& model,
                        const std::function<void(onnx::NodeProto&)>& visit) {
  model::for_each_graph(*model.mutable_graph(), [&](onnx::GraphProto& graph, int) {
    for (auto& node : *graph.mutable_node()) {
      visit(node);
    }
  });
  for (auto& function : *model.mutable_functions()) {
    for (auto& node : *function.mutable_node()) {
      visit(node);
      for (auto* graph : model::subgraphs_of(node)) {
        model::for_each_graph(*graph, [&](onnx::GraphProto& g, int) {
          for (auto& inner : *g.mutable_node()) {
            visit(inner);
          }
        });
      }
    }
  }
}

struct Function {
  onnx::FunctionProto* proto;
  std::vector<onnx::AttributeProto> defaults;
};

void add_defaults(onnx::NodeProto& node, const Function& function) {
  std::set<std::string> given;
  for (const auto& attribute : node.attribute()) {
    given.insert(attribute.name());
  }
  for (const auto& attribute : function.defaults) {
    if (given.count(attribute.name()) == 0) {
      auto* added = node.add_attribute();
      *added = attribute;
      added->set_doc_string(k_default_mark);
    }
  }
}

} // namespace

void expose_function_calls(onnx::ModelProto& model) {
  std::map<std::pair<Key, std::string>, Function> functions;
  std::set<Key> named;
  std::set<Key> overloaded;
  for (auto& function : *model.mutable_functions()) {
    Key key{schemas::canonical_domain(function.domain()), function.name()};
    std::string overload = model::overload_of(function);
    if (function.name().find(k_overload_mark) != std::string::npos) {
      throw Error(describe(key, overload) + ": a function name may not contain \"" +
                  k_overload_mark + "\"");
    }
    Function entry{&function, model::attribute_defaults(function)};
    // 1.12 substitutes only the attributes a function lists by name.
    std::set<std::string> listed(function.attribute().begin(), function.attribute().end());
    for (const auto& attribute : entry.defaults) {
      if (!listed.insert(attribute.name()).second) {
        throw Error(describe(key, overload) + ": attribute \"" + attribute.name() +
                    "\" is both in attribute and in attribute_proto");
      }
      function.add_attribute(attribute.name());
    }
    if (!functions.emplace(std::make_pair(key, overload), std::move(entry)).second) {
      throw Error("the model defines " + describe(key, overload) + " twice",
                  "each model-local function needs its own (domain, name, overload)");
    }
    named.insert(key);
    if (!overload.empty()) {
      overloaded.insert(key);
    }
  }
  if (functions.empty()) {
    return;
  }
  for_each_call_site(model, [&](onnx::NodeProto& node) {
    Key key{schemas::canonical_domain(node.domain()), node.op_type()};
    std::string overload = model::overload_of(node);
    if (node.op_type().find(k_overload_mark) != std::string::npos) {
      throw Error("node \"" + node.name() + "\": an op type may not contain \"" + k_overload_mark +
                  "\" in a model with local functions");
    }
    auto found = functions.find({key, overload});
    if (found == functions.end()) {
      // An overload on a call of a schema op means nothing to anyone: left alone.
      if (!overload.empty() && named.count(key) != 0) {
        throw Error("node \"" + node.name() + "\" calls " + describe(key, overload) +
                    ", which the model does not define");
      }
      return;
    }
    add_defaults(node, found->second);
    if (overloaded.count(key) != 0) {
      node.set_op_type(mangled(node.op_type(), overload));
    }
  });
  for (auto& [id, function] : functions) {
    if (overloaded.count(id.first) != 0) {
      function.proto->set_name(mangled(function.proto->name(), id.second));
    }
  }
}

void restore_function_calls(onnx::ModelProto& model) {
  if (model.functions_size() == 0) {
    return;
  }
  const bool names = is_mangled(model);
  for (auto& function : *model.mutable_functions()) {
    function.set_name(demangled(function.name()));
    std::set<std::string> defaults;
    for (const auto& attribute : model::attribute_defaults(function)) {
      defaults.insert(attribute.name());
    }
    auto* listed = function.mutable_attribute();
    for (int i = listed->size() - 1; i >= 0 && !defaults.empty(); --i) {
      if (defaults.count(listed->Get(i)) != 0) {
        listed->DeleteSubrange(i, 1);
      }
    }
  }
  for_each_call_site(model, [&](onnx::NodeProto& node) {
    if (names) {
      node.set_op_type(demangled(node.op_type()));
    }
    auto* attributes = node.mutable_attribute();
    for (int i = attributes->size() - 1; i >= 0; --i) {
      if (attributes->Get(i).doc_string() == k_default_mark) {
        attributes->DeleteSubrange(i, 1);
      }
    }
  });
}

} // namespace npucc::check
