#include "compiler/graph_writer.h"
#include "compiler/manifest.h"
#include "compiler/output_folder.h"
#include "compiler/validate.h"
#include "npucc/compile.h"
#include "npucc/error.h"
#include "passes/pass_manager.h"
#include "passes/registry.h"
#include "util/file_io.h"

namespace npucc {

namespace {

std::vector<PassSummary> summarise(const std::vector<passes::PassReport>& reports) {
  std::vector<PassSummary> out;
  for (const auto& report : reports) {
    out.push_back({report.name, report.unit, report.changed});
  }
  return out;
}

// Runs `step`, prefixing any error with the model's file name so every message
// names the file it is about.
template <typename Step>
void in_file(const std::string& file, Step&& step) {
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

} // namespace

CompileResult compile(const CompileOptions& options, const LogSink& log) {
  const std::string file = options.model_path.string();
  auto say = [&](const std::string& line) {
    if (log) {
      log(line);
    }
  };
  // Fail on a bad output folder or pass name before any real work.
  compiler::OutputFolder output(options.output_dir);
  auto pass_names = options.passes.empty() ? passes::default_pipeline() : options.passes;
  auto pipeline = passes::create_passes(pass_names);

  Model model = read_model(options.model_path, options.limits);
  CompileResult result;
  result.model_sha256 = model.sha256;
  in_file(file, [&] {
    if (!options.input_shapes.empty()) {
      compiler::apply_input_shapes(model.proto, options.input_shapes);
    }
    // Real models arrive unsorted, and the checker wants sorted graphs.
    std::vector<std::unique_ptr<passes::Pass>> sort;
    sort.push_back(passes::create_pass("topological_sort"));
    passes::PassManager(std::move(sort)).run(model.proto, passes::FixedPoint::no, say);
    compiler::check_model(model.proto);
    compiler::infer_shapes_strict(model.proto);
    say("validated: ONNX checker and strict shape inference passed");

    passes::PassManager manager(std::move(pipeline));
    auto round_reports = manager.run(model.proto, passes::FixedPoint::yes, say);
    auto reports = round_reports;
    // The passes must leave a valid, fully typed graph; anything else is npucc's bug.
    try {
      compiler::infer_shapes_strict(model.proto);
      // Folding (fold_shapes, fold_constants) gives inference static shapes it could
      // not see before, which can make more Shape nodes foldable: repeat (bounded).
      for (int round = 0; round < 4 && passes::any_changed(round_reports); ++round) {
        round_reports = manager.run(model.proto, passes::FixedPoint::yes, say);
        passes::add_reports(reports, round_reports);
        compiler::infer_shapes_strict(model.proto);
      }
      result.passes = summarise(reports);
      compiler::check_model(model.proto);
    } catch (const Error& e) {
      throw Error(std::string("internal error: the optimised graph is invalid: ") + e.what(),
                  "please report this; --passes topological_sort skips the optimisations");
    }
  });
  result.memory_plan = plan_memory(model.proto.graph());

  CompiledGraph high = compiler::write_graph(model.proto, output.staging(), "high.onnx",
                                            options.external_data);
  high.role = "high";
  high.precision = "float32";
  result.graphs.push_back(std::move(high));

  auto manifest = compiler::build_manifest(options, model, result);
  util::write_file_atomic(output.staging() / "manifest.json", manifest.dump(2) + "\n");
  output.publish();
  result.manifest_path = options.output_dir / "manifest.json";
  return result;
}

} // namespace npucc
