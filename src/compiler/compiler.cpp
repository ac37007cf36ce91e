#include "accuracy/checked.h"
#include "check/isolated_worker.h"
#include "check/validate.h"
#include "accuracy/compile_check.h"
#include "output/output_folder.h"
#include "compiler/overflow_counts.h"
#include "compiler/prepared_compile.h"
#include "model/ir_fields.h"
#include "model/model_reader.h"
#include "model/shape_check.h"
#include "model/weight_store.h"
#include "npucc/compile.h"
#include "npucc/error.h"
#include "opset/raise_opset.h"
#include "passes/lift_constants.h"
#include "passes/pass_manager.h"
#include "passes/registry.h"
#include "precision/compile_precision.h"
#include "precision/overflow_prescan.h"
#include "schemas/known_ops.h"
#include "util/input_scan.h"
#include "util/parallel.h"
#include "util/test_point.h"

namespace npucc {

namespace {

std::vector<PassSummary> summarise(const std::vector<passes::PassReport>& reports) {
  std::vector<PassSummary> out;
  for (const auto& report : reports) {
    out.push_back({report.name, report.unit, report.changed});
  }
  return out;
}

bool contradicts(const onnx::TensorShapeProto& declared, const onnx::TensorShapeProto& computed) {
  if (declared.dim_size() != computed.dim_size()) {
    return true;
  }
  for (int i = 0; i < declared.dim_size(); ++i) {
    if (declared.dim(i).has_dim_value() && computed.dim(i).has_dim_value() &&
        declared.dim(i).dim_value() != computed.dim(i).dim_value()) {
      return true;
    }
  }
  return false;
}

// After the passes failed inference: is it a graph output whose declared shape the graph
// contradicts, seen only now that folding computed a shape (Reshape to a folded Shape)?
// Infers once more without the outputs' declared shapes and names the first that differs.
void refuse_contradicted_output_shape(const onnx::ModelProto& model) {
  onnx::ModelProto probe = model; // weights are in the table: metadata only
  probe.mutable_graph()->clear_value_info();
  for (auto& output : *probe.mutable_graph()->mutable_output()) {
    if (output.type().has_tensor_type()) {
      output.mutable_type()->mutable_tensor_type()->clear_shape();
    }
  }
  try {
    check::check_and_infer(probe, check::Checker::none);
  } catch (const Error&) {
    return; // not (only) the declared shapes
  }
  for (int i = 0; i < model.graph().output_size(); ++i) {
    const auto& declared = model.graph().output(i).type();
    const auto& computed = probe.graph().output(i).type();
    if (declared.has_tensor_type() && declared.tensor_type().has_shape() &&
        computed.has_tensor_type() && computed.tensor_type().has_shape() &&
        contradicts(declared.tensor_type().shape(), computed.tensor_type().shape())) {
      throw Error(
          "graph output \"" + model.graph().output(i).name() + "\" declares shape " +
              model::shape_text(declared.tensor_type().shape()) + " but the graph computes " +
              model::shape_text(computed.tensor_type().shape()) + " (seen once shapes were folded)",
          "fix or remove the output's declared shape");
    }
  }
}

// After the passes failed inference: is the model itself inconsistent once its shapes are
// computed (a Reshape to a folded Shape whose rank contradicts what follows)? The model as
// given, with only its Shape nodes folded, tells: if that fails too, the model is at fault.
void refuse_inconsistent_after_shape_folding(const CompileOptions& options) {
  Model again = read_model(options.model_path, options.limits, Weights::in_table);
  if (!options.input_shapes.empty()) {
    check::apply_input_shapes(again.proto, options.input_shapes);
  }
  std::vector<std::unique_ptr<passes::Pass>> folding;
  folding.push_back(passes::create_pass("topological_sort"));
  folding.push_back(passes::create_pass("lift_constants")); // Shape of a Constant folds too
  folding.push_back(passes::create_pass("fold_shapes"));
  passes::PassManager(std::move(folding)).run(again.proto, passes::FixedPoint::yes, {});
  try {
    check::check_and_infer(again.proto, check::Checker::none);
  } catch (const check::InferenceCrash&) {
    return;
  } catch (const Error& e) {
    throw Error(std::string("the graph contradicts itself once its Shape nodes are folded: ") +
                    e.what(),
                "fix the model: a declared shape, or a Reshape or Expand target, disagrees "
                "with the shapes that reach it");
  }
}

// --target-opset: a pipeline step before the passes, on the typed model (adapters read
// element types and ranks); the raised model is checked and typed again.
template <typename Say> void raise_model_opset(onnx::ModelProto& model, int64_t target, Say& say) {
  auto report = opset::raise_opset(model, target);
  if (report.from == report.to) {
    return;
  }
  check::check_and_infer(model, check::Checker::after);
  int64_t adapted = 0;
  for (const auto& [step, count] : report.adapted) {
    adapted += count;
  }
  say("target opset: raised from " + std::to_string(report.from) + " to " +
      std::to_string(report.to) + ", " + std::to_string(adapted) + " node(s) adapted");
}

// Runs `step`, prefixing any error with the model's file name so every message
// names the file it is about.
template <typename Step> void in_file(const std::string& file, Step&& step) {
  try {
    step();
  } catch (const Error& e) {
    std::string message = e.what();
    if (message.rfind(file, 0) == 0) {
      throw;
    }
    throw Error(file + ": " + message, e.hint(), e.status());
  }
}

// The variants are rewrites of the optimised model: value_info the rewrite typed again
// gets its metadata_props back, and device configurations follow the Casts put between
// their nodes and the tensors they shard (model/ir_fields.h says what is dropped).
void carry_ir_annotations(const onnx::ModelProto& source, precision::PrecisionBuild& variants,
                          const LogSink& log) {
  for (auto& variant : variants.graphs) {
    model::carry_value_info_fields(source.graph(), *variant.model.mutable_graph());
    int64_t dropped = model::fix_device_configurations(*variant.model.mutable_graph());
    if (dropped > 0 && log) {
      log(variant.role + ": " + std::to_string(dropped) +
          (dropped == 1 ? " sharding spec" : " sharding specs") +
          " dropped: its node no longer reads or writes the tensor it names");
    }
  }
}

// --check-accuracy and --accuracy-target: the report, and the nodes a repair kept float32.
void check_accuracy(PreparedCompile& prepared, const onnx::ModelProto& model,
                    const CompileOptions& options, const precision::OverflowSource& overflow,
                    const LogSink& log) {
  // The repair's candidates: the same build with more low-graph nodes kept float32.
  auto rebuild = [&](const std::vector<std::string>& kept, const accuracy::RangeKept& ranges,
                     const std::vector<std::string>& lowered) {
    CompileOptions repaired = options;
    repaired.accuracy_kept_nodes = kept;
    repaired.activation_range_nodes = ranges;
    repaired.accuracy_lowered_nodes = lowered;
    auto variants = precision::build_precision_variants(model, repaired, overflow);
    carry_ir_annotations(model, variants, {});
    return variants;
  };
  auto outcome = accuracy::run_accuracy_check(prepared.variants, options, rebuild, log);
  prepared.result.accuracy_report = std::move(outcome.report);
  prepared.result.drift_report = std::move(outcome.drift_report);
  prepared.accuracy_kept_nodes = std::move(outcome.kept_nodes);
  prepared.activation_range_nodes = std::move(outcome.range_kept);
  prepared.accuracy_lowered_nodes = std::move(outcome.lowered_nodes);
}

} // namespace

PreparedCompile prepare_compile(Model model, const CompileOptions& options, const LogSink& log,
                                const compiler::OverflowCounts* counts) {
  const precision::OverflowSource overflow =
      counts ? counts->source() : precision::OverflowSource{};
  const std::string file = options.model_path.string();
  auto say = [&](const std::string& line) {
    if (log) {
      log(line);
    }
  };
  // Fail on a bad pass name before any real work.
  auto pass_names = options.passes.empty() ? passes::default_pipeline() : options.passes;
  auto pipeline = passes::create_passes(pass_names);

  PreparedCompile prepared;
  // Large weights leave the protobuf (moved, not copied) so that the checker, shape
  // inference and the precision variants copy metadata only.
  model::ensure_weight_store(model).adopt_initializers(*model.proto.mutable_graph());
  CompileResult& result = prepared.result;
  result.model_sha256 = model.sha256;
  result.model_ir_version = model.proto.ir_version();
  for (const auto& opset : model.proto.opset_import()) {
    result.model_opsets[opset.domain().empty() ? "ai.onnx" : opset.domain()] = opset.version();
  }
  in_file(file, [&] {
    if (!options.input_shapes.empty()) {
      check::apply_input_shapes(model.proto, options.input_shapes);
    }
    // Real models arrive unsorted, and the checker wants sorted graphs.
    std::vector<std::unique_ptr<passes::Pass>> sort;
    sort.push_back(passes::create_pass("topological_sort"));
    passes::PassManager(std::move(sort)).run(model.proto, passes::FixedPoint::no, say);
    schemas::check_known_operators(model.proto);
    // Old exporters wrote Constants of types their opset's Constant lacks; as initializers
    // the same values are valid at that opset, so the checks judge the model, not the quirk.
    if (int64_t lifted = passes::lift_constants_the_opset_forbids(model.proto); lifted > 0) {
      say("lifted " + std::to_string(lifted) +
          " Constant node(s) of a type Constant does not allow at this opset into initializers");
    }
    util::test_point("compile:checking");
    check::check_and_infer(model.proto, check::Checker::before);
    // Inferred shapes can be far larger than any declared one (an outer product).
    model::check_value_shapes(model.proto.graph(), file, options.limits);
    say("validated: ONNX checker and strict shape inference passed");
    if (options.target_opset != 0) {
      raise_model_opset(model.proto, options.target_opset, say);
    }

    passes::PassManager manager(std::move(pipeline));
    auto round_reports = manager.run(model.proto, passes::FixedPoint::yes, say);
    auto reports = round_reports;
    // The passes must leave a valid, fully typed graph; anything else is npucc's bug.
    try {
      // Folding (fold_shapes, fold_constants) gives inference static shapes it could
      // not see before, which can make more Shape nodes foldable: repeat (bounded).
      // Each inference runs the checker on its result in the same child, so a round
      // of passes that changes nothing ends the loop without another child.
      for (int round = 0;; ++round) {
        check::check_and_infer(model.proto, check::Checker::after);
        if (round >= 4 || !passes::any_changed(round_reports)) {
          break;
        }
        round_reports = manager.run(model.proto, passes::FixedPoint::yes, say);
        if (!passes::any_changed(round_reports)) {
          break;
        }
        passes::add_reports(reports, round_reports);
      }
      result.passes = summarise(reports);
    } catch (const check::InferenceCrash&) {
      throw;
    } catch (const Error& e) {
      refuse_contradicted_output_shape(model.proto);
      refuse_inconsistent_after_shape_folding(options);
      throw Error(std::string("internal error: the optimised graph is invalid: ") + e.what(),
                  "please report this; --passes topological_sort skips the optimisations");
    }
  });
  util::test_point("compile:memory-plan");
  result.memory_plan = plan_memory(model.proto.graph());

  // Precision variants (high / low / emulation) from the optimised graph.
  util::test_point("compile:precision");
  in_file(file, [&] {
    prepared.variants = precision::build_precision_variants(model.proto, options, overflow);
  });
  util::test_point("compile:prepared");
  carry_ir_annotations(model.proto, prepared.variants, log);
  if (accuracy::is_checked(options)) {
    in_file(file, [&] { check_accuracy(prepared, model.proto, options, overflow, log); });
  }
  in_file(file, [&] {
    precision::add_target_opset_hint(prepared.variants, model.proto, options, overflow);
  });
  prepared.model = std::move(model);
  return prepared;
}

void rebuild_variants(PreparedCompile& prepared, const CompileOptions& options,
                      const compiler::OverflowCounts* counts) {
  const precision::OverflowSource overflow =
      counts ? counts->source() : precision::OverflowSource{};
  CompileOptions repaired = options; // what the accuracy repair kept stays kept
  repaired.accuracy_kept_nodes = prepared.accuracy_kept_nodes;
  repaired.activation_range_nodes = prepared.activation_range_nodes;
  repaired.accuracy_lowered_nodes = prepared.accuracy_lowered_nodes;
  in_file(options.model_path.string(), [&] {
    prepared.variants =
        precision::build_precision_variants(prepared.model.proto, repaired, overflow);
    precision::add_target_opset_hint(prepared.variants, prepared.model.proto, options, overflow);
  });
  carry_ir_annotations(prepared.model.proto, prepared.variants, {});
}

WrittenCompile write_compile(PreparedCompile prepared, const CompileOptions& options,
                             const CacheKey& cache_key, const WriteProgress& progress,
                             const std::string& model_sha256) {
  return GraphWriting(std::move(prepared), options)
      .finish(options, cache_key, progress, model_sha256);
}

namespace {

// Whether the precision rewrite runs, and so counts how many of each weight's values
// overflow the low type.
bool needs_overflow_counts(const CompileOptions& options) {
  return options.accelerate_train_mode || !options.precision.precision_mode.empty() ||
         !options.precision.precision_mode_v2.empty();
}

// The model file's digest (for the manifest) when the reader left it to be taken in the
// read below, or empty.
std::string digest_taken(const std::vector<util::InputScan::Hashed>& hashed) {
  return hashed.empty() ? std::string() : hashed.front().sha256;
}

// One read of the model file on a second core: it hashes the file for the manifest and
// feeds the overflow counts of the weights in it (the external data is read for the counts
// alone), beside the compile. With that core the graphs are written meanwhile, the rewrite
// taking the weights the read has yet to reach to fit the low type
// (OverflowCounts::speculate), and written again on the rare model where one does not (as
// the cached compile does beside the key's read, pipeline/compile_cached.cpp).
CompileResult compile_beside_read(Model model, const CompileOptions& options, const LogSink& log,
                                  const WriteProgress& write_progress) {
  std::vector<std::shared_ptr<const util::InputFile>> to_hash;
  if (model.sha256.empty()) {
    to_hash.push_back(model::input_files(model)->find(model.path));
  }
  std::unique_ptr<compiler::OverflowCounts> counts;
  if (needs_overflow_counts(options)) {
    counts = std::make_unique<compiler::OverflowCounts>(model.proto);
  }
  const bool second_core = util::thread_budget() > 1;
  util::InputScan scan(to_hash, counts ? &counts->observer() : nullptr,
                       second_core ? util::InputScan::On::second_thread
                                   : util::InputScan::On::this_thread);
  // An accuracy check judges the low graph as built: it is built on the counts, not on an
  // assumption.
  const bool checks_accuracy = accuracy::is_checked(options);
  if (!second_core || !counts || checks_accuracy) {
    PreparedCompile prepared = prepare_compile(std::move(model), options, log, counts.get());
    return write_compile(std::move(prepared), options, {}, write_progress,
                         digest_taken(scan.wait()))
        .result;
  }
  counts->speculate();
  GraphWriting writing(prepare_compile(std::move(model), options, log, counts.get()), options);
  std::string sha256 = digest_taken(scan.wait());
  if (counts->speculation_held()) {
    return writing.finish(options, {}, write_progress, sha256).result;
  }
  PreparedCompile prepared = writing.abandon();
  if (log) {
    log("precision: a weight overflows the low type: rewriting the low graph");
  }
  rebuild_variants(prepared, options, counts.get());
  return write_compile(std::move(prepared), options, {}, write_progress, sha256).result;
}

CompileResult compile_model(const CompileOptions& options, Model* preread, const LogSink& log,
                            const WriteProgress& write_progress) {
  // Fail on a bad output folder before any real work.
  output::check_output_folder(options);
  if (preread == nullptr) {
    check::start_isolated_worker(); // while this process is small
  }
  util::test_point("compile:reading");
  Model model =
      preread != nullptr
          ? std::move(*preread)
          : model::read_mapped_model(options.model_path, options.limits, nullptr,
                                     model::TableScope::every_tensor, model::ModelDigest::later);
  return compile_beside_read(std::move(model), options, log, write_progress);
}

} // namespace

CompileResult compile(const CompileOptions& options, const LogSink& log,
                      const WriteProgress& write_progress) {
  return compile_model(options, nullptr, log, write_progress);
}

CompileResult compile(Model model, const CompileOptions& options, const LogSink& log,
                      const WriteProgress& write_progress) {
  return compile_model(options, &model, log, write_progress);
}

} // namespace npucc
