#include "precision/compile_precision.h"

#include "check/validate.h"
#include "npucc/error.h"
#include "opset/raise_opset.h"
#include "passes/fuse_hard_activations.h"
#include "passes/pass_manager.h"
#include "precision/emulation.h"
#include "precision/low_graph_opset.h"
#include "precision/opset_hint.h"
#include "precision/precision_modes.h"
#include "precision/report.h"
#include "util/test_point.h"

#include <algorithm>
#include <set>

namespace npucc::precision {

namespace {

bool mixed(const ModePlan& plan) {
  return plan.rewrite && plan.policy == Policy::mixed;
}

// Options that only mean something for a lowered graph are refused without one, rather
// than silently ignored.
void refuse_unused_options(const CompileOptions& options, const ModePlan& low_plan) {
  auto refuse = [](const std::string& option, const std::string& why) {
    throw usage_error(option + " has no effect here: " + why,
                      "add --accelerate-train-mode or a lowering --precision-mode");
  };
  if (!low_plan.rewrite) {
    const std::string why = "no graph is lowered";
    if (!options.modify_mixlist.empty()) {
      refuse("--modify-mixlist", why);
    }
    if (!options.keep_dtype_nodes.empty()) {
      refuse("--keep-dtype", why);
    }
    if (options.low_precision_weights) {
      refuse("--low-precision-weights", why);
    }
    if (!options.keep_io_types) {
      refuse("--no-keep-io-types", why);
    }
    if (options.emit_emulation) {
      refuse("--emit-emulation", why);
    }
  } else if (!mixed(low_plan) && !options.modify_mixlist.empty()) {
    refuse("--modify-mixlist", "the lists are used by mixed precision modes only (" +
                                   low_plan.precision + " is not one)");
  }
}

RewriteOptions rewrite_options(const ModePlan& plan, const CompileOptions& options,
                               const OverflowSource& overflow, std::vector<std::string>& warnings) {
  RewriteOptions out;
  out.overflow = overflow;
  out.low = plan.low;
  out.policy = plan.policy;
  out.lists = default_op_lists(plan.low);
  if (!options.modify_mixlist.empty()) {
    auto edit = parse_mixlist(options.modify_mixlist, options.modify_mixlist_source.empty()
                                                          ? "(inline)"
                                                          : options.modify_mixlist_source);
    warnings = apply_mixlist(out.lists, edit);
    auto black = edit.to_add.find("black-list");
    if (black != edit.to_add.end()) {
      out.user_denied.insert(black->second.begin(), black->second.end());
    }
  }
  out.keep_nodes.insert(options.keep_dtype_nodes.begin(), options.keep_dtype_nodes.end());
  out.accuracy_nodes.insert(options.accuracy_kept_nodes.begin(),
                            options.accuracy_kept_nodes.end());
  out.range_nodes = options.activation_range_nodes;
  out.lowered_nodes.insert(options.accuracy_lowered_nodes.begin(),
                           options.accuracy_lowered_nodes.end());
  out.keep_io_types = options.keep_io_types ? KeepIoTypes::yes : KeepIoTypes::no;
  out.weights = options.low_precision_weights ? WeightStorage::low : WeightStorage::master_float32;
  return out;
}

// The rewrite must leave a valid, fully typed graph; anything else is npucc's bug.
void validate(onnx::ModelProto& model, const std::string& role) {
  try {
    check::check_and_infer(model, check::Checker::before_and_after);
  } catch (const check::InferenceCrash&) {
    throw;
  } catch (const Error& e) {
    throw Error("internal error: the " + role + " graph is invalid: " + e.what(),
                "please report this; --keep-dtype NODE keeps a node in its original precision");
  }
}

// A decomposed HardSwish (x * relu6(x + 3) / 6) rounds four to six times in the low type,
// the fused op once: on ppocrv4_det's fast1 emulation that is most of what the elementwise
// ops cost (passes/fuse_hard_activations.h). Low graphs only: the high graph and the other
// modes' outputs stay as the model wrote them. Returns fused op -> count.
std::map<std::string, int64_t> fuse_hard_activations(onnx::ModelProto& model,
                                                     const CompileOptions& options) {
  passes::FuseHardActivations pass(
      {options.keep_dtype_nodes.begin(), options.keep_dtype_nodes.end()});
  passes::PassManager::run_pass(pass, model);
  return pass.fused();
}

// A raise to opset 22 that was refused: its bfloat16-capable nodes stay float32 (issue 33:
// that was once silent). A low graph without one low node: warn_if_nothing_lowered.
void warn_of_refused_raise(nlohmann::json& out) {
  auto& warnings = out["warnings"];
  const auto& opset = out.value("opset", nlohmann::json());
  if (opset.is_object() && opset.contains("why") &&
      opset.at("why").get<std::string>().rfind("raising", 0) == 0) {
    warnings.push_back("the low graph stays at opset " +
                       std::to_string(opset.at("model").get<int64_t>()) + ", where " +
                       low_graph_opset_held(opset) +
                       " cannot be bfloat16: " + opset.at("why").get<std::string>());
  }
}

// The float types the model computes in, as a graph label: "float32" for a float32 model
// (or one with no float data), "float16"/"bfloat16" for a model already in one of them,
// "mixed_float16"/"mixed_bfloat16" for a mix with float32. A graph not rewritten keeps the
// model's types, and its label says so.
std::string model_float_label(const onnx::GraphProto& graph) {
  std::set<int32_t> types;
  auto note = [&](int32_t type) {
    if (type == onnx::TensorProto::FLOAT || type == onnx::TensorProto::FLOAT16 ||
        type == onnx::TensorProto::BFLOAT16) {
      types.insert(type);
    }
  };
  for (const auto* list : {&graph.input(), &graph.output(), &graph.value_info()}) {
    for (const auto& value : *list) {
      note(value.type().tensor_type().elem_type());
    }
  }
  for (const auto& tensor : graph.initializer()) {
    note(tensor.data_type());
  }
  bool f32 = types.count(onnx::TensorProto::FLOAT) > 0;
  const char* low = types.count(onnx::TensorProto::FLOAT16)    ? "float16"
                    : types.count(onnx::TensorProto::BFLOAT16) ? "bfloat16"
                                                                : nullptr;
  if (low == nullptr) {
    return "float32";
  }
  return f32 ? std::string("mixed_") + low : std::string(low);
}

// A low graph that lowers nothing is no result: it computes what the high graph does.
void warn_if_nothing_lowered(RewriteReport& report) {
  int64_t low = 0;
  for (const auto& [op, by_precision] : report.nodes) {
    auto found = by_precision.find(report.low_type);
    low += found == by_precision.end() || op == "Constant" ? 0 : found->second;
  }
  if (low > 0) {
    return;
  }
  std::vector<std::pair<int64_t, std::string>> reasons;
  for (const auto& [reason, count] : report.kept_reasons) {
    reasons.push_back({count, reason});
  }
  std::sort(reasons.rbegin(), reasons.rend());
  std::string why;
  for (size_t i = 0; i < reasons.size() && i < 3; ++i) {
    why += (i ? ", " : "") + reasons[i].second + " " + std::to_string(reasons[i].first);
  }
  report.warnings.push_back("no node runs in " + report.low_type +
                            ": the low graph computes what the high graph does" +
                            (why.empty() ? std::string() : " (kept float32: " + why + ")"));
}

nlohmann::json lower(onnx::ModelProto& model, const ModePlan& plan, const CompileOptions& options,
                     const OverflowSource& overflow, const std::string& role,
                     LowGraphRaise raise = LowGraphRaise::no) {
  nlohmann::json opset = raise_low_graph(model, options, plan.low, raise);
  const auto fused =
      role == "low" ? fuse_hard_activations(model, options) : std::map<std::string, int64_t>{};
  std::vector<std::string> warnings;
  RewriteOptions rewrite = rewrite_options(plan, options, overflow, warnings);
  RewriteReport report = rewrite_mixed_precision(model, rewrite);
  report.warnings.insert(report.warnings.begin(), warnings.begin(), warnings.end());
  warn_if_nothing_lowered(report);
  validate(model, role);
  nlohmann::json out = report_json(report, rewrite.policy, rewrite.weights, plan.note);
  if (!opset.is_null()) {
    out["opset"] = std::move(opset);
  }
  if (!fused.empty()) {
    out["fused_activations"] = fused;
  }
  if (plan.rewrite) {
    warn_of_refused_raise(out);
  }
  return out;
}

} // namespace

PrecisionBuild build_precision_variants(onnx::ModelProto model, const CompileOptions& options,
                                        const OverflowSource& overflow) {
  validate_precision_options(options.precision, options.accelerate_train_mode);
  ModePlan high_plan = plan_for_precision_mode(options.precision, model);
  PrecisionBuild build;
  if (!options.accelerate_train_mode) {
    refuse_unused_options(options, high_plan);
    if (!high_plan.rewrite) {
      std::string label = model_float_label(model.graph());
      build.graphs.push_back({"high", label, "", std::move(model)});
      return build;
    }
    // Single variant: the configured mode's graph is the only one, in role "low".
    GraphVariant low{"low", high_plan.precision, "", std::move(model)};
    build.report = lower(low.model, high_plan, options, overflow, "low");
    build.graphs.push_back(std::move(low));
  } else {
    ModePlan low_plan = plan_for_accelerate_mode(*options.accelerate_train_mode);
    refuse_unused_options(options, low_plan);
    util::test_point("precision:low-graph");
    GraphVariant low{"low", low_plan.precision, "", model};
    // fast1: the low graph alone moves to opset 22 (low_graph_opset.cpp).
    build.report = lower(low.model, low_plan, options, overflow, "low", LowGraphRaise::yes);
    std::string high_label =
        high_plan.rewrite ? high_plan.precision : model_float_label(model.graph());
    util::test_point("precision:high-graph");
    GraphVariant high{"high", high_label, "", std::move(model)};
    if (high_plan.rewrite) {
      // allow_fp32_to_fp16: the phase after the switch runs in the user's own mode
      // (Ascend restores it). The mixlist and keep-dtype apply to the low graph only.
      CompileOptions plain = options;
      plain.modify_mixlist.clear();
      plain.accuracy_kept_nodes.clear(); // measured on the low graph
      plain.accuracy_lowered_nodes.clear();
      build.high_report = lower(high.model, high_plan, plain, overflow, "high");
    }
    build.graphs.push_back(std::move(high));
    build.graphs.push_back(std::move(low));
  }
  if (options.emit_emulation) {
    const GraphVariant& low = build.graphs.back();
    GraphVariant emulation{"emulation", "float32", low.precision, low.model};
    util::test_point("precision:emulation-graph");
    const EmulationResult result = make_emulation(emulation.model);
    build.report["emulation_round_trips"] = result.round_trips;
    build.report["emulation_fusion_guards"] = result.fusion_guards;
    validate(emulation.model, "emulation");
    build.graphs.push_back(std::move(emulation));
  }
  return build;
}

void add_target_opset_hint(PrecisionBuild& build, const onnx::ModelProto& model,
                           const CompileOptions& options, const OverflowSource& overflow) {
  // fast1's raise and a given --target-opset say their own piece (low_graph_opset.h).
  if (!build.report.is_object() || build.report.contains("opset") || options.target_opset != 0) {
    return;
  }
  const int64_t target = opset_freeing_schema_holds(model, build.report);
  if (target == 0) {
    return;
  }
  const ModePlan plan = options.accelerate_train_mode
                            ? plan_for_accelerate_mode(*options.accelerate_train_mode)
                            : plan_for_precision_mode(options.precision, model);
  onnx::ModelProto raised = model; // weights are in the store: metadata only
  try {
    opset::raise_opset(raised, target);
    check::check_and_infer(raised, check::Checker::after);
    nlohmann::json hint =
        target_opset_hint(build.report, lower(raised, plan, options, overflow, "low"), target);
    if (!hint.is_null()) {
      build.report["target_opset_hint"] = std::move(hint);
    }
  } catch (const check::InferenceCrash&) {
    throw;
  } catch (const Error&) {
    // The raise is refused (or its lowering fails): there is nothing to suggest.
  }
}

} // namespace npucc::precision
