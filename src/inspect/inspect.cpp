#include "npucc/inspect.h"

#include "check/isolated_worker.h"
#include "check/validate.h"
#include "accuracy/drift_report.h"
#include "inspect/compiled_output.h"
#include "inspect/graph_stats.h"
#include "model/shape_check.h"
#include "model/tensor_info.h"
#include "npucc/error.h"
#include "passes/pass_manager.h"
#include "passes/registry.h"

#include <unordered_set>

namespace npucc {

namespace {

ValueSummary summarise_value(const onnx::ValueInfoProto& value) {
  ValueSummary out;
  out.name = value.name();
  const onnx::TypeProto* type = &value.type();
  // Containers are described by their kind and the tensor they hold.
  switch (type->value_case()) {
  case onnx::TypeProto::kTensorType:
    out.kind = "tensor";
    break;
  case onnx::TypeProto::kSparseTensorType:
    out.kind = "sparse_tensor";
    break;
  case onnx::TypeProto::kSequenceType:
    out.kind = "sequence";
    type = &type->sequence_type().elem_type();
    break;
  case onnx::TypeProto::kOptionalType:
    out.kind = "optional";
    type = &type->optional_type().elem_type();
    break;
  case onnx::TypeProto::kMapType:
    out.kind = "map";
    type = &type->map_type().value_type();
    break;
  default:
    out.kind = "unknown";
    break;
  }
  const onnx::TensorShapeProto* shape = nullptr;
  if (type->has_tensor_type()) {
    out.dtype = model::dtype_name(type->tensor_type().elem_type());
    shape = type->tensor_type().has_shape() ? &type->tensor_type().shape() : nullptr;
  } else if (type->has_sparse_tensor_type()) {
    out.dtype = model::dtype_name(type->sparse_tensor_type().elem_type());
    shape = type->sparse_tensor_type().has_shape() ? &type->sparse_tensor_type().shape() : nullptr;
  } else {
    out.dtype = "undefined";
  }
  if (shape != nullptr) {
    out.has_shape = true;
    for (const auto& dim : shape->dim()) {
      Dimension d;
      if (dim.has_dim_value()) {
        d.value = dim.dim_value();
      } else if (dim.has_dim_param()) {
        d.param = dim.dim_param();
      }
      out.dims.push_back(std::move(d));
    }
  }
  return out;
}

// Plans on a copy: the input shapes, the sort and inference must not leak into the
// figures above, which describe the model as stored.
MemoryPlan plan_for(const Model& model, const InspectOptions& options) {
  onnx::ModelProto proto = model.proto;
  const std::string file = model.path.string();
  if (!options.input_shapes.empty()) {
    check::apply_input_shapes(proto, options.input_shapes);
  }
  std::vector<std::unique_ptr<passes::Pass>> sort;
  sort.push_back(passes::create_pass("topological_sort"));
  passes::PassManager(std::move(sort)).run(proto, passes::FixedPoint::no);
  check::infer_shapes_lenient(proto);
  // Inference may reveal a tensor no declared shape hinted at (an outer product).
  model::check_value_shapes(proto.graph(), file, options.limits);
  return plan_memory(proto.graph());
}

} // namespace

uint64_t InspectReport::parameter_elements() const {
  uint64_t total = 0;
  for (const auto& group : parameters) {
    total += group.elements;
  }
  return total;
}

uint64_t InspectReport::parameter_bytes() const {
  uint64_t total = 0;
  for (const auto& group : parameters) {
    total += group.bytes;
  }
  return total;
}

InspectReport inspect_model(Model model, const InspectOptions& options) {
  const std::string file = model.path.string();
  InspectReport report;
  report.path = model.path;
  report.file_bytes = model.file_bytes;
  report.sha256 = model.sha256;
  report.external_files = model.external_files;
  const auto& proto = model.proto;
  report.ir_version = proto.ir_version();
  report.producer_name = proto.producer_name();
  report.producer_version = proto.producer_version();
  report.graph_name = proto.graph().name();
  for (const auto& opset : proto.opset_import()) {
    report.opsets.push_back({inspect::domain_name(opset.domain()), opset.version()});
  }
  inspect::count_nodes(proto.graph(), report);
  report.parameters = inspect::count_parameters(proto.graph());
  std::unordered_set<std::string> initializers;
  for (const auto& init : proto.graph().initializer()) {
    initializers.insert(init.name());
  }
  for (const auto& input : proto.graph().input()) {
    if (initializers.count(input.name()) == 0) {
      report.inputs.push_back(summarise_value(input));
    }
  }
  for (const auto& output : proto.graph().output()) {
    report.outputs.push_back(summarise_value(output));
  }
  report.unregistered_ops = inspect::find_unregistered_ops(proto);
  const auto compiled = inspect::compiled_graph(model.path);
  report.accuracy_lines = inspect::accuracy_lines(compiled);
  if (!report.accuracy_lines.empty()) {
    report.accuracy_json = compiled.manifest.at("accuracy").dump();
  }
  if (const auto drift = inspect::drift_report(compiled); drift.is_object()) {
    report.drift_lines = accuracy::format_drift(drift);
    report.drift_json = drift.dump();
  }
  report.input_shapes = options.input_shapes;
  try {
    report.memory_plan = plan_for(model, options);
  } catch (const Error& e) {
    std::string message = e.what();
    if (message.rfind(file, 0) == 0) {
      throw;
    }
    throw Error(file + ": " + message, e.hint(), e.status());
  }
  return report;
}

InspectReport inspect_model(const std::filesystem::path& path, const InspectOptions& options) {
  return inspect_model(read_model_for_inspect(path, options.limits), options);
}

Model read_model_for_inspect(const std::filesystem::path& path, const ReadLimits& limits) {
  // The shape-inference worker is forked while this process is small, as compile does.
  check::start_isolated_worker();
  // Compile's reading: weights stay in the mapped files, which inspect only counts; Constant
  // values and float_data too, which compile parses.
  return read_model(path, limits, Weights::all_in_table);
}

} // namespace npucc
