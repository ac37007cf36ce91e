#include "check/validate.h"

#include "check/function_calls.h"
#include "check/isolated_worker.h"
#include "model/graph_walk.h"
#include "model/ir_fields.h"
#include "model/weight_store.h"
#include "npucc/error.h"
#include "schemas/checker.h"
#include "schemas/registry.h"
#include "util/strings.h"

#include <google/protobuf/io/coded_stream.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>
#include <unordered_set>
#include <vector>

namespace npucc::check {

void apply_input_shapes(onnx::ModelProto& model, const std::vector<InputShape>& shapes) {
  auto& graph = *model.mutable_graph();
  std::unordered_set<std::string> initializers;
  for (const auto& init : graph.initializer()) {
    initializers.insert(init.name());
  }
  std::vector<std::string> names;
  for (const auto& input : graph.input()) {
    if (initializers.count(input.name()) == 0) {
      names.push_back(input.name());
    }
  }
  for (const auto& shape : shapes) {
    onnx::ValueInfoProto* target = nullptr;
    for (auto& input : *graph.mutable_input()) {
      if (input.name() == shape.name && initializers.count(input.name()) == 0) {
        target = &input;
      }
    }
    if (target == nullptr) {
      std::string suggestion = util::closest_match(shape.name, names);
      throw usage_error("--input-shape: the model has no input \"" + shape.name + "\"" +
                            (suggestion.empty() ? "" : "; did you mean \"" + suggestion + "\"?"),
                        "its inputs are: " + util::join(names, ", "));
    }
    if (!target->type().has_tensor_type()) {
      throw usage_error("--input-shape: input \"" + shape.name + "\" is not a tensor");
    }
    auto* tensor_shape = target->mutable_type()->mutable_tensor_type()->mutable_shape();
    if (target->type().tensor_type().has_shape() && tensor_shape->dim_size() != 0 &&
        tensor_shape->dim_size() != static_cast<int>(shape.dims.size())) {
      throw usage_error("--input-shape: input \"" + shape.name + "\" has rank " +
                        std::to_string(tensor_shape->dim_size()) + ", not " +
                        std::to_string(shape.dims.size()));
    }
    if (tensor_shape->dim_size() == 0) {
      for (size_t i = 0; i < shape.dims.size(); ++i) {
        tensor_shape->add_dim();
      }
    }
    for (size_t i = 0; i < shape.dims.size(); ++i) {
      auto* dim = tensor_shape->mutable_dim(static_cast<int>(i));
      int64_t wanted = shape.dims[i];
      if (wanted < 0) {
        continue;
      }
      if (dim->has_dim_value() && dim->dim_value() != wanted) {
        throw usage_error("--input-shape: dimension " + std::to_string(i) + " of input \"" +
                          shape.name + "\" is fixed at " + std::to_string(dim->dim_value()) +
                          " in the model, not " + std::to_string(wanted));
      }
      dim->set_dim_value(wanted);
    }
  }
}

namespace {

// Attributes ONNX 1.12's shape inference divides by or sizes loops with, unchecked: a
// stride of 0 in a pooling node is a division by zero (SIGFPE) in
// convPoolShapeInference. The checker does not look at values, so npucc does.
constexpr const char* k_positive_attributes[] = {"strides", "dilations", "kernel_shape",
                                                 "blocksize", "group"};

void check_attribute_values(const onnx::GraphProto& root) {
  model::for_each_graph(root, [](const onnx::GraphProto& graph, int) {
    for (int i = 0; i < graph.node_size(); ++i) {
      const auto& node = graph.node(i);
      if (!node.domain().empty() && node.domain() != "ai.onnx") {
        continue;
      }
      for (const auto& attribute : node.attribute()) {
        for (const char* name : k_positive_attributes) {
          if (attribute.name() != name) {
            continue;
          }
          bool positive = attribute.type() != onnx::AttributeProto::INT || attribute.i() > 0;
          for (int64_t value : attribute.ints()) {
            positive = positive && value > 0;
          }
          if (!positive) {
            throw Error(model::describe_node(node, i) + ": attribute \"" + attribute.name() +
                        "\" must be positive");
          }
        }
      }
    }
  });
}

// Worker side: what goes back to the parent: the model without raw weights (they stay
// in the parent, so a large model is neither copied through the socket nor limited by
// protobuf's 2 GiB).
std::string payload_of(onnx::ModelProto& model) {
  restore_function_calls(model);
  model::for_each_tensor(*model.mutable_graph(), [](onnx::TensorProto& t) { t.clear_raw_data(); });
  return model.SerializeAsString();
}

// Worker side: inference on `model` in place, and its payload.
std::string inferred_payload(onnx::ModelProto& model, const onnx::ShapeInferenceOptions& options) {
  onnx::shape_inference::InferShapes(model, &schemas::registry(), options);
  return payload_of(model);
}

// Parent side: `model` becomes the inferred model of `payload`, with its own weights.
void adopt_inferred(onnx::ModelProto& model, std::string_view payload) {
  google::protobuf::io::CodedInputStream stream(reinterpret_cast<const uint8_t*>(payload.data()),
                                                static_cast<int>(payload.size()));
  stream.SetRecursionLimit(1024);
  onnx::ModelProto inferred;
  if (!inferred.ParseFromCodedStream(&stream)) {
    throw InferenceCrash("shape inference: the inferred model did not come back intact");
  }
  // Inference adds types, never tensors: both walks meet the same tensors in order.
  std::vector<onnx::TensorProto*> weights;
  model::for_each_tensor(*model.mutable_graph(),
                         [&](onnx::TensorProto& t) { weights.push_back(&t); });
  size_t index = 0;
  bool same = true;
  model::for_each_tensor(*inferred.mutable_graph(), [&](onnx::TensorProto& t) {
    if (index >= weights.size() || weights[index]->name() != t.name()) {
      same = false;
    } else if (weights[index]->has_raw_data()) {
      // Large raw data stayed here (isolated_worker.h): the worker saw a placeholder.
      t.clear_external_data();
      t.clear_data_location();
      t.mutable_raw_data()->swap(*weights[index]->mutable_raw_data());
    }
    ++index;
  });
  if (!same || index != weights.size()) {
    throw InferenceCrash("shape inference: the inferred model did not come back intact");
  }
  model = std::move(inferred);
}

std::string options_argument(const onnx::ShapeInferenceOptions& options) {
  return {static_cast<char>('0' + (options.check_type ? 1 : 0)),
          static_cast<char>('0' + options.error_mode),
          static_cast<char>('0' + options.enable_data_propagation)};
}

onnx::ShapeInferenceOptions options_of(const std::string& argument) {
  if (argument.size() != 3) {
    throw Error("the inference options did not arrive intact");
  }
  return onnx::ShapeInferenceOptions(argument[0] == '1', argument[1] - '0', argument[2] == '1');
}

void run_inference(onnx::ModelProto& model, const onnx::ShapeInferenceOptions& options) {
  std::string reply =
      run_isolated("shape inference", IsolatedRequest::infer, options_argument(options), model);
  if (reply[0] == '1') {
    throw std::runtime_error(reply.substr(1));
  }
  adopt_inferred(model, std::string_view(reply).substr(1));
}

void clear_value_info(onnx::ModelProto& model) {
  model::for_each_graph(*model.mutable_graph(),
                        [](onnx::GraphProto& graph, int) { graph.clear_value_info(); });
}

} // namespace

namespace {

// Child side of the checker: throws onnx's ValidationError.
void run_checker(const onnx::ModelProto& model) {
  // ONNX 1.12's checker stats every external data location: weights held in the
  // table (model/weight_store.h) name no file, so in this throwaway copy they name
  // the current folder, which exists. Copying costs metadata only.
  onnx::ModelProto copy = model;
  model::for_each_tensor(*copy.mutable_graph(), [](onnx::TensorProto& tensor) {
    if (!model::is_stored(tensor)) {
      return;
    }
    for (auto& entry : *tensor.mutable_external_data()) {
      if (entry.key() == "location") {
        entry.set_value(".");
      }
    }
  });
  schemas::check_model(copy);
}

// Strict inference: data propagation gives static shapes through Shape/Reshape chains;
// stale value_info written by exporters is a frequent cause of spurious conflicts, so a
// failing attempt is retried on a copy without it (and then without data propagation)
// before the model is refused.
// A copy of `model` ready for inference attempt `attempt` (0, 1, 2).
onnx::ModelProto attempt_input(const onnx::ModelProto& model, int attempt) {
  onnx::ModelProto candidate = model;
  if (attempt >= 1) {
    clear_value_info(candidate);
  }
  return candidate;
}

onnx::ShapeInferenceOptions attempt_options(int attempt) {
  return onnx::ShapeInferenceOptions(/*check_type=*/true, /*strict_mode=*/1,
                                     /*data_propagation=*/attempt != 2);
}

} // namespace

namespace {

// Worker side of check_and_infer: the checker (before), the first inference attempt on
// `model` in place, the checker on its result (after). "P" + the inferred model, or
// "R" + the first attempt's error line (the parent retries); throws for the checkers.
std::string first_attempt(onnx::ModelProto& model, Checker checker) {
  if (checker == Checker::before || checker == Checker::before_and_after) {
    try {
      run_checker(model);
    } catch (const std::exception& e) {
      throw std::runtime_error("ONNX checker: " + util::first_line(e.what()));
    }
  }
  try {
    onnx::shape_inference::InferShapes(model, &schemas::registry(), attempt_options(0));
  } catch (const std::exception& e) {
    return "R" + util::first_line(e.what());
  }
  if (checker == Checker::after || checker == Checker::before_and_after) {
    try {
      run_checker(model);
    } catch (const std::exception& e) {
      throw std::runtime_error("ONNX checker: " + util::first_line(e.what()));
    }
  }
  return "P" + payload_of(model);
}

} // namespace

std::string answer_isolated(IsolatedRequest request, const std::string& argument,
                            onnx::ModelProto& model) {
  // Undone by payload_of: only the inferred types come back.
  expose_function_calls(model);
  switch (request) {
  case IsolatedRequest::check:
    run_checker(model);
    return "";
  case IsolatedRequest::infer:
    return inferred_payload(model, options_of(argument));
  case IsolatedRequest::check_and_infer:
    if (argument.size() != 1 || argument[0] < '0' || argument[0] > '3') {
      throw Error("the checker setting did not arrive intact");
    }
    return first_attempt(model, static_cast<Checker>(argument[0] - '0'));
  }
  throw Error("unknown request to the ONNX worker");
}

void check_model(onnx::ModelProto& model) {
  std::string reply = run_isolated("ONNX checker", IsolatedRequest::check, "", model);
  if (reply[0] == '1') {
    throw Error("ONNX checker: " + reply.substr(1));
  }
}

void check_and_infer(onnx::ModelProto& model, Checker checker) {
  check_attribute_values(model.graph());
  const bool check_after = checker == Checker::after || checker == Checker::before_and_after;
  // One request for the checker and the first inference attempt. Named for inference
  // even when the checker shares it: every ONNX crash the fuzzers found was in
  // inference, and the message then reads as before.
  std::string reply =
      run_isolated("shape inference", IsolatedRequest::check_and_infer,
                   std::string(1, static_cast<char>('0' + static_cast<int>(checker))), model);
  if (reply[0] == '1') {
    throw Error(reply.substr(1));
  }
  if (reply.size() >= 2 && reply[1] == 'P') {
    adopt_inferred(model, std::string_view(reply).substr(2));
    return;
  }
  // The retries, rare, each with a fresh worker (the failed attempt ended the last one).
  const std::string first_error = reply.substr(2);
  for (int attempt = 1; attempt < 3; ++attempt) {
    onnx::ModelProto candidate = attempt_input(model, attempt);
    try {
      run_inference(candidate, attempt_options(attempt));
    } catch (const InferenceCrash&) {
      throw;
    } catch (const std::exception&) {
      continue;
    }
    // The retry cleared value_info: its metadata_props (IR 10) come back by name.
    model::carry_value_info_fields(model.graph(), *candidate.mutable_graph());
    model = std::move(candidate);
    if (check_after) {
      check_model(model);
    }
    return;
  }
  throw Error("shape inference: " + first_error);
}

void infer_shapes_strict(onnx::ModelProto& model) {
  check_and_infer(model, Checker::none);
}

void infer_shapes_lenient(onnx::ModelProto& model) {
  try {
    check_attribute_values(model.graph());
    onnx::ShapeInferenceOptions options(false, 0, true);
    run_inference(model, options);
  } catch (const std::exception&) {
    // Best effort only.
  }
}

} // namespace npucc::check
