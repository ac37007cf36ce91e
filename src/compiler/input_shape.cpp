#include "npucc/compile.h"
#include "npucc/error.h"
#include "util/strings.h"

namespace npucc {

std::vector<InputShape> parse_input_shapes(const std::string& text) {
  std::vector<InputShape> shapes;
  const std::string hint =
      "expected --input-shape \"name:d0,d1,...;name2:...\" (a dim of -1 stays dynamic)";
  for (const auto& part : util::split(text, ';')) {
    std::string_view item = util::trim(part);
    if (item.empty()) {
      continue;
    }
    size_t colon = item.rfind(':');
    if (colon == std::string_view::npos || colon == 0) {
      throw usage_error("--input-shape: \"" + std::string(item) + "\" has no \"name:\" part", hint);
    }
    InputShape shape;
    shape.name = std::string(util::trim(item.substr(0, colon)));
    std::string_view dims = util::trim(item.substr(colon + 1));
    if (!dims.empty()) {
      for (const auto& dim_text : util::split(dims, ',')) {
        int64_t dim = 0;
        if (!util::parse_int64(util::trim(dim_text), dim) || dim < -1) {
          throw usage_error("--input-shape: dimension \"" + dim_text + "\" of input \"" +
                                shape.name + "\" is not a non-negative integer or -1",
                            hint);
        }
        shape.dims.push_back(dim);
      }
    }
    for (const auto& seen : shapes) {
      if (seen.name == shape.name) {
        throw usage_error("--input-shape: input \"" + shape.name + "\" is given twice");
      }
    }
    shapes.push_back(std::move(shape));
  }
  if (shapes.empty()) {
    throw usage_error("--input-shape: no shapes given", hint);
  }
  return shapes;
}

} // namespace npucc
