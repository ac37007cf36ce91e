#include "app.h"
#include "npucc/inspect.h"
#include "report/drift_plot_file.h"
#include "util/strings.h"

#include <iostream>

namespace npucc::cli {

namespace {

struct InspectArgs {
  std::string model;
  std::string input_shape;
  bool json = false;
  bool nodes = false;
  std::string drift_plot;
};

} // namespace

std::function<int()> setup_inspect(CLI::App& command, const GlobalOptions& global) {
  auto args = std::make_shared<InspectArgs>();
  command
      .add_option("MODEL", args->model,
                  "the .onnx model to inspect (with --drift-plot: the folder npucc compile wrote)")
      ->required();
  command
      .add_option("--input-shape", args->input_shape,
                  "fix dynamic input dims for the memory plan: \"name:d0,d1,...;name2:...\" "
                  "(repeat it for more inputs)")
      ->delimiter(';')
      ->multi_option_policy(CLI::MultiOptionPolicy::Join);
  command.add_flag("--json", args->json, "print the report as JSON (see npucc-inspect(1))");
  command.add_flag("--nodes", args->nodes,
                   "list every node instead: name, op, float types in and out, and the graph "
                   "(If/Loop/Scan body) holding it; --keep-dtype takes these names");
  command.add_option("--drift-plot", args->drift_plot,
                     "draw the drift report of the compiled output MODEL (compile's "
                     "--accuracy-report nodes) as an SVG picture to this file")
      ->type_name("FILE.svg");
  return [args, &global] {
    if (!args->drift_plot.empty()) {
      const std::string drawn =
          report::write_drift_plot_file(report::drift_report_of_output(args->model), args->drift_plot);
      if (!global.quiet) { // the picture is the output; this line only says what it shows
        std::cout << "drift picture: " << util::printable(args->drift_plot) << " (" << drawn << ")\n";
      }
      return 0;
    }
    if (args->nodes) {
      const Model model = read_model_for_inspect(args->model);
      const std::vector<NodeSummary> nodes = list_nodes(model);
      std::cout << (args->json ? node_list_json(model.path, nodes) : node_list_text(nodes));
      return 0;
    }
    InspectOptions options;
    if (!args->input_shape.empty()) {
      options.input_shapes = parse_input_shapes(args->input_shape);
    }
    InspectReport report = inspect_model(args->model, options);
    // The report is the requested output: --quiet does not silence it.
    std::cout << (args->json ? inspect_report_json(report) : inspect_report_text(report));
    return 0;
  };
}

} // namespace npucc::cli
