#include "app.h"
#include "npucc/inspect.h"

#include <iostream>

namespace npucc::cli {

namespace {

struct InspectArgs {
  std::string model;
  std::string input_shape;
  bool json = false;
};

} // namespace

std::function<int()> setup_inspect(CLI::App& command, const GlobalOptions&) {
  auto args = std::make_shared<InspectArgs>();
  command.add_option("MODEL", args->model, "the .onnx model to inspect")->required();
  command.add_option("--input-shape", args->input_shape,
                     "fix dynamic input dims for the memory plan: \"name:d0,d1,...;name2:...\"");
  command.add_flag("--json", args->json, "print the report as JSON (see npucc-inspect(1))");
  return [args] {
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
