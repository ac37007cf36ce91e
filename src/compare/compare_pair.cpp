#include "compare/compare_pair.h"

#include "accuracy/samples.h"
#include "check/validate.h"
#include "model/graph_walk.h"
#include "npucc/error.h"
#include "precision/emulation.h"
#include "runtime/tensor.h"
#include "util/strings.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace npucc::compare {

namespace {

using onnx::TensorProto;
using Declared = accuracy::ModelInput; // a name, an element type, dims (-1: not fixed)

bool is_low_type(int32_t type) {
  return type == TensorProto::FLOAT16 || type == TensorProto::BFLOAT16;
}

std::vector<Declared> declared_outputs(const onnx::GraphProto& graph) {
  std::vector<Declared> out;
  for (const auto& value : graph.output()) {
    Declared declared{value.name(), value.type().tensor_type().elem_type(), {}};
    for (const auto& dim : value.type().tensor_type().shape().dim()) {
      declared.dims.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
    }
    out.push_back(std::move(declared));
  }
  return out;
}

// Reads one of the two models and runs ONNX's checker on it (with type inference for the
// candidate); its errors name the model's role and file.
onnx::ModelProto read_checked(const std::filesystem::path& path, const char* role, bool infer,
                              const ReadLimits& limits, const std::vector<InputShape>& shapes) {
  try {
    onnx::ModelProto proto = read_model(path, limits, Weights::in_proto).proto;
    check::apply_input_shapes(proto, shapes);
    if (infer) {
      check::check_and_infer(proto, check::Checker::before);
    } else {
      check::check_model(proto);
    }
    return proto;
  } catch (const Error& e) {
    const std::string message = e.what();
    const std::string file = path.string();
    // read_model's messages start with the file already.
    throw Error(std::string(role) + " " +
                    (message.rfind(file, 0) == 0 ? message : file + ": " + message),
                e.hint(), e.status());
  }
}

bool same_fixed_shape(const Declared& a, const Declared& b) {
  if (a.dims.empty() || b.dims.empty()) {
    return true; // a shape not declared (or a scalar): ONNX Runtime checks it when it runs
  }
  if (a.dims.size() != b.dims.size()) {
    return false;
  }
  for (size_t i = 0; i < a.dims.size(); ++i) {
    if (a.dims[i] >= 0 && b.dims[i] >= 0 && a.dims[i] != b.dims[i]) {
      return false;
    }
  }
  return true;
}

std::string names_of(const std::vector<Declared>& values) {
  std::vector<std::string> names;
  for (const auto& value : values) {
    names.push_back("'" + value.name + "'");
  }
  return names.empty() ? "none" : util::join(names, ", ");
}

// The reference's inputs or outputs against the candidate's, by name. `kind`: "input" or
// "output". Inputs must match both ways (a run gives every input); the candidate may have
// outputs the reference lacks (they are not compared).
void match_values(const std::vector<Declared>& reference, const std::vector<Declared>& candidate,
                  const char* kind, std::vector<IoConversion>& conversions) {
  const std::string what = kind;
  for (const auto& want : reference) {
    auto found = std::find_if(candidate.begin(), candidate.end(),
                              [&](const Declared& d) { return d.name == want.name; });
    if (found == candidate.end()) {
      throw Error("the candidate has no " + what + " '" + want.name + "' (the reference's " +
                      what + "s are matched by name; the candidate's: " + names_of(candidate) +
                      ")",
                  "compare two graphs with the same " + what + " names");
    }
    const bool widened = want.type == TensorProto::FLOAT && is_low_type(found->type);
    if ((found->type != want.type && !widened) || !same_fixed_shape(want, *found)) {
      throw Error(what + " '" + want.name + "': the reference's is " +
                      runtime::describe(want.type, want.dims) + ", the candidate's " +
                      runtime::describe(found->type, found->dims),
                  "compare two graphs whose " + what + "s have the same shapes (float16 or "
                  "bfloat16 in the candidate for float32 in the reference is taken)");
    }
    if (widened) {
      conversions.push_back({want.name, what == "input", want.type, found->type});
    }
  }
  if (what == "input" && candidate.size() > reference.size()) {
    for (const auto& extra : candidate) {
      auto in_reference = std::find_if(reference.begin(), reference.end(),
                                       [&](const Declared& d) { return d.name == extra.name; });
      if (in_reference == reference.end()) {
        throw Error("the candidate's input '" + extra.name + "' is not an input of the reference "
                    "(its inputs: " + names_of(reference) + ")",
                    "compare two graphs with the same input names");
      }
    }
  }
}

// The low types the candidate stores values in, from its inferred types.
std::vector<int32_t> stored_low_types(const onnx::ModelProto& candidate) {
  std::set<int32_t> types;
  model::for_each_graph(candidate.graph(), [&](const onnx::GraphProto& graph, int) {
    for (const auto* values : {&graph.input(), &graph.output(), &graph.value_info()}) {
      for (const auto& value : *values) {
        const int32_t type = value.type().tensor_type().elem_type();
        if (is_low_type(type)) {
          types.insert(type);
        }
      }
    }
    for (const auto& init : graph.initializer()) {
      if (is_low_type(init.data_type())) {
        types.insert(init.data_type());
      }
    }
  });
  return {types.begin(), types.end()};
}

// Values the candidate stores in a low type under a name the reference defines too.
std::vector<MatchedValue> matched_values(const onnx::ModelProto& reference,
                                         const onnx::ModelProto& candidate) {
  std::unordered_set<std::string> defined;
  model::for_each_graph(reference.graph(), [&](const onnx::GraphProto& graph, int) {
    auto names = model::defined_names(graph);
    defined.insert(names.begin(), names.end());
  });
  std::vector<MatchedValue> out;
  std::unordered_set<std::string> seen;
  model::for_each_graph(candidate.graph(), [&](const onnx::GraphProto& graph, int) {
    for (const auto* values : {&graph.value_info(), &graph.output()}) {
      for (const auto& value : *values) {
        const int32_t type = value.type().tensor_type().elem_type();
        if (is_low_type(type) && defined.count(value.name()) != 0 &&
            seen.insert(value.name()).second) {
          out.push_back({value.name(), value.name(), type});
        }
      }
    }
  });
  return out;
}

// The plain run: each input the candidate takes in a low type gets float32 samples through a
// Cast to that type, as the emulation's round trip rounds them (ONNX Runtime's Cast rounds to
// nearest even, as npucc's conversion does).
void cast_inputs_in(onnx::ModelProto& candidate, const std::vector<IoConversion>& conversions) {
  std::unordered_set<std::string> taken;
  model::for_each_graph(candidate.graph(), [&](const onnx::GraphProto& graph, int) {
    auto names = model::defined_names(graph);
    taken.insert(names.begin(), names.end());
  });
  auto* graph = candidate.mutable_graph();
  google::protobuf::RepeatedPtrField<onnx::NodeProto> casts;
  for (const auto& conversion : conversions) {
    if (!conversion.input) {
      continue;
    }
    std::string low = conversion.name + "_npucc_low";
    while (!taken.insert(low).second) {
      low += "_";
    }
    model::rename_reads(*graph, conversion.name, low);
    for (auto& input : *graph->mutable_input()) {
      if (input.name() == conversion.name) {
        input.mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
      }
    }
    auto* cast = casts.Add();
    cast->set_op_type("Cast");
    cast->set_name(low + "_cast");
    cast->add_input(conversion.name);
    cast->add_output(low);
    auto* to = cast->add_attribute();
    to->set_name("to");
    to->set_type(onnx::AttributeProto::INT);
    to->set_i(conversion.candidate_type);
  }
  for (auto& node : *graph->mutable_node()) {
    *casts.Add() = std::move(node);
  }
  graph->mutable_node()->Swap(&casts);
}

// The emulation takes float32 where the candidate takes a low type (its round trip rounds
// them), so the samples, read as the reference's inputs, must be float32 there.
void refuse_low_reference_inputs(const onnx::ModelProto& reference) {
  for (const auto& input : accuracy::model_inputs(reference.graph())) {
    if (is_low_type(input.type)) {
      throw Error("input '" + input.name + "': the reference takes " +
                      runtime::type_name(input.type) + ", and the candidate's emulation takes "
                      "float32 samples",
                  "compare against the float32 model, or run the candidate as is with --run plain");
    }
  }
}

} // namespace

ComparedPair prepare_pair(const std::filesystem::path& reference,
                          const std::filesystem::path& candidate, CandidateRun run,
                          const ReadLimits& limits, const std::vector<InputShape>& shapes) {
  ComparedPair pair;
  pair.run = run;
  pair.reference = read_checked(reference, "the reference", false, limits, shapes);
  pair.candidate_run = read_checked(candidate, "the candidate", true, limits, shapes);
  match_values(accuracy::model_inputs(pair.reference.graph()),
               accuracy::model_inputs(pair.candidate_run.graph()), "input", pair.conversions);
  match_values(declared_outputs(pair.reference.graph()),
               declared_outputs(pair.candidate_run.graph()), "output", pair.conversions);
  for (const auto& output : pair.reference.graph().output()) {
    pair.outputs.push_back(output.name());
  }
  pair.low_types = stored_low_types(pair.candidate_run);
  pair.matched_values = matched_values(pair.reference, pair.candidate_run);
  pair.drift = plan_compare_drift(pair.candidate_run.graph(), pair.reference.graph());
  if (run == CandidateRun::emulated) {
    refuse_low_reference_inputs(pair.reference);
    try {
      pair.rounded_values = precision::make_emulation(pair.candidate_run).round_trips;
    } catch (const Error& e) {
      std::string why = e.what();
      const std::string own_option = "--emit-emulation: "; // the compile's wording
      if (why.rfind(own_option, 0) == 0) {
        why = why.substr(own_option.size());
      }
      throw Error("the candidate " + candidate.string() + ": no float32 emulation: " + why,
                  "convert the candidate to opset 13 or later, or run it as is with --run plain",
                  e.status());
    }
  } else {
    cast_inputs_in(pair.candidate_run, pair.conversions);
  }
  return pair;
}

} // namespace npucc::compare
