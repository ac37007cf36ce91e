#include "compiler/validate.h"

#include "model/graph_walk.h"
#include "model/weight_store.h"
#include "npucc/error.h"
#include "util/strings.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <functional>
#include <google/protobuf/io/coded_stream.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace npucc::compiler {

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

// Debian's libonnx 1.12 crashes in several ops' inference functions on malformed
// models the checker accepts (RNN and ConvTranspose read dims past an input's rank or
// of a missing input). A crash is a crash for the user, and those cases cannot all be
// foreseen, so the checker and inference run in a forked child: `work` returns its
// payload, and the reply is "0" + payload or "1" + the error line. A child that dies is
// an InferenceCrash naming `what`.
std::string run_isolated(const std::string& what, const std::function<std::string()>& work) {
  // ONNX builds its schema registry lazily, inside a function-local static. If another
  // thread of a host program is building it when this one forks, the child inherits
  // the held initialisation guard and waits for it forever. Built here, once, before
  // any fork, every child finds it ready. (cache populate -j N compiles in worker
  // processes, each single-threaded, for this reason among others: cache/populate_workers.h.)
  // Schema() builds the whole registry (map()); Instance() is the other function-local
  // static the children use. get_all_schemas_with_history() copies every schema (some
  // 24,000 allocations) and warms nothing more.
  static const bool k_registry_ready = onnx::OpSchemaRegistry::Schema("Relu", 14, "") != nullptr &&
                                       onnx::OpSchemaRegistry::Instance() != nullptr;
  (void)k_registry_ready;
  int fds[2];
  if (::pipe(fds) != 0) {
    throw Error(std::string(what + ": cannot create a pipe: ") + std::strerror(errno));
  }
  pid_t parent = ::getpid();
  pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(what + ": cannot fork: " + std::strerror(errno));
  }
  if (child == 0) {
    ::close(fds[0]);
    // A crash here is expected and reported by the parent in one line: the handlers
    // inherited from the host (doctest's, a sanitizer's) would print a crash report.
    for (int fatal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
      ::signal(fatal, SIG_DFL);
    }
    // A compile killed mid-inference (a populate worker, Ctrl-C) takes this child
    // along instead of leaving it to finish alone.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) {
      ::_exit(3);
    }
    std::string reply;
    try {
      reply = "0" + work();
    } catch (const std::exception& e) {
      reply = "1" + util::first_line(e.what());
    }
    size_t done = 0;
    while (done < reply.size()) {
      ssize_t n = ::write(fds[1], reply.data() + done, reply.size() - done);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n <= 0) {
        ::_exit(3);
      }
      done += static_cast<size_t>(n);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string reply;
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = ::read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      break;
    }
    reply.append(buffer, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || reply.empty()) {
    throw InferenceCrash(
        what + ": ONNX crashed on this model (" +
        (WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                             : "exit status " + std::to_string(WEXITSTATUS(status))) +
        "): a node's inputs or attributes are malformed in a way the ONNX checker misses");
  }
  return reply;
}

// Child side: inference on `model` in place; the result without raw weights (they stay
// in the parent, so a large model is neither copied through the pipe nor limited by
// protobuf's 2 GiB).
// Child side: what goes back to the parent: the model without raw weights (they stay
// in the parent, so a large model is neither copied through the pipe nor limited by
// protobuf's 2 GiB).
std::string payload_of(onnx::ModelProto& model) {
  model::for_each_tensor(*model.mutable_graph(), [](onnx::TensorProto& t) { t.clear_raw_data(); });
  return model.SerializeAsString();
}

// Child side: inference on `model` in place, and its payload.
std::string inferred_payload(onnx::ModelProto& model, const onnx::ShapeInferenceOptions& options) {
  onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
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
      t.mutable_raw_data()->swap(*weights[index]->mutable_raw_data());
    }
    ++index;
  });
  if (!same || index != weights.size()) {
    throw InferenceCrash("shape inference: the inferred model did not come back intact");
  }
  model = std::move(inferred);
}

void run_inference(onnx::ModelProto& model, const onnx::ShapeInferenceOptions& options) {
  std::string reply =
      run_isolated("shape inference", [&] { return inferred_payload(model, options); });
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
  onnx::checker::check_model(copy);
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

void check_model(const onnx::ModelProto& model) {
  std::string reply = run_isolated("ONNX checker", [&] {
    run_checker(model);
    return std::string();
  });
  if (reply[0] == '1') {
    throw Error("ONNX checker: " + reply.substr(1));
  }
}

void check_and_infer(onnx::ModelProto& model, Checker checker) {
  check_attribute_values(model.graph());
  const bool check_after = checker == Checker::after || checker == Checker::before_and_after;
  // One child for the checker and the first inference attempt: a fork costs tens of
  // milliseconds with a large model's page tables, and a compile validates several
  // times. Named for inference even when the checker shares the child: every ONNX crash
  // the fuzzers found was in inference, and the message then reads as before.
  // The reply's payload starts with 'P' (the inferred model) or 'R' (the first attempt
  // failed: its error line follows).
  std::string reply = run_isolated("shape inference", [&] {
    if (checker == Checker::before || checker == Checker::before_and_after) {
      try {
        run_checker(model);
      } catch (const std::exception& e) {
        throw std::runtime_error("ONNX checker: " + util::first_line(e.what()));
      }
    }
    // This child's `model` is its own (fork): attempt 0 infers on it in place, as
    // inferred_payload does, instead of on a copy (attempt_input(model, 0) is a plain copy).
    onnx::ModelProto& inferred = model;
    try {
      onnx::shape_inference::InferShapes(inferred, onnx::OpSchemaRegistry::Instance(),
                                         attempt_options(0));
    } catch (const std::exception& e) {
      return "R" + util::first_line(e.what());
    }
    if (check_after) {
      try {
        run_checker(inferred);
      } catch (const std::exception& e) {
        throw std::runtime_error("ONNX checker: " + util::first_line(e.what()));
      }
    }
    return "P" + payload_of(inferred);
  });
  if (reply[0] == '1') {
    throw Error(reply.substr(1));
  }
  if (reply.size() >= 2 && reply[1] == 'P') {
    adopt_inferred(model, std::string_view(reply).substr(2));
    return;
  }
  // The retries, rare, each in a child of its own (a failed attempt may leave ONNX's
  // state anything but clean).
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

} // namespace npucc::compiler
