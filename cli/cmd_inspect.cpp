#include "app.h"

namespace npucc::cli {

std::function<int()> setup_inspect(CLI::App& command, const GlobalOptions&) {
  auto model = std::make_shared<std::string>();
  command.add_option("MODEL", *model, "the .onnx model to inspect")->required();
  return [] { return 0; };
}

} // namespace npucc::cli
