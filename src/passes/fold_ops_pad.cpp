#include "passes/fold_ops.h"

#include <set>

namespace npucc::passes::fold {

namespace {

using T = onnx::TensorProto;

enum class PadMode { constant, reflect, edge, wrap };

// Where output index `i` of an axis padded by `begin` reads in a dim of `extent`; -1 for
// the constant.
int64_t source_index(int64_t i, int64_t begin, int64_t extent, PadMode mode) {
  int64_t at = i - begin;
  if (at >= 0 && at < extent) {
    return at;
  }
  switch (mode) {
  case PadMode::constant:
    return -1;
  case PadMode::edge:
    return at < 0 ? 0 : extent - 1;
  case PadMode::reflect: // pads < extent, checked: one reflection is enough
    return at < 0 ? -at : 2 * (extent - 1) - at;
  case PadMode::wrap: // pads <= extent, checked
    return (at % extent + extent) % extent;
  }
  return -1;
}

// Whether a pad of `begin` and `end` on a dim of `extent` is defined, and the same in ONNX
// Runtime, for `mode`: cropping (negative pads) only with constants; reflect needs pads
// shorter than the dim, edge a dim to repeat, wrap (as the definition shows) pads no
// longer than the dim.
bool pad_defined(int64_t begin, int64_t end, int64_t extent, PadMode mode) {
  if (begin == 0 && end == 0) {
    return true;
  }
  if (mode == PadMode::constant) {
    return extent + begin + end >= 0 && begin >= -extent && end >= -extent;
  }
  if (begin < 0 || end < 0 || extent == 0) {
    return false;
  }
  if (mode == PadMode::reflect) {
    return begin < extent && end < extent;
  }
  return mode == PadMode::edge || (begin <= extent && end <= extent);
}

} // namespace

Result evaluate_pad(const onnx::NodeProto& node, const Inputs& inputs, int version) {
  const FoldValue* data = inputs.empty() ? nullptr : inputs[0];
  const FoldValue* pads = inputs.size() > 1 ? inputs[1] : nullptr;
  if (data == nullptr || pads == nullptr || pads->type != T::INT64 || pads->dims.size() != 1) {
    return std::nullopt;
  }
  const auto* mode_attribute = find_attribute(node, "mode");
  const std::string mode_name = mode_attribute == nullptr ? "constant" : mode_attribute->s();
  PadMode mode = PadMode::constant;
  if (mode_name == "reflect") {
    mode = PadMode::reflect;
  } else if (mode_name == "edge") {
    mode = PadMode::edge;
  } else if (mode_name == "wrap" && version >= 19) {
    mode = PadMode::wrap;
  } else if (mode_name != "constant") {
    return std::nullopt;
  }
  // The fill: constant_value (a scalar of data's type), else 0 / false.
  const FoldValue* fill = inputs.size() > 2 ? inputs[2] : nullptr;
  if (fill != nullptr && (fill->type != data->type || fill->size() != 1)) {
    return std::nullopt;
  }
  const auto rank = static_cast<int64_t>(data->dims.size());
  std::vector<int64_t> axes;
  const FoldValue* axes_input = version >= 18 && inputs.size() > 3 ? inputs[3] : nullptr;
  if (axes_input != nullptr) {
    auto given = as_indices(axes_input);
    std::set<int64_t> seen;
    for (int64_t axis : given.value_or(std::vector<int64_t>())) {
      if (!normalize_axis(axis, rank) || !seen.insert(axis).second) {
        return std::nullopt; // a repeated axis is undefined
      }
      axes.push_back(axis);
    }
    if (!given || given->empty()) {
      return std::nullopt;
    }
  } else {
    for (int64_t d = 0; d < rank; ++d) {
      axes.push_back(d);
    }
  }
  if (pads->ints.size() != 2 * axes.size()) {
    return std::nullopt;
  }
  std::vector<int64_t> begin(static_cast<size_t>(rank), 0);
  FoldValue out;
  out.type = data->type;
  out.dims = data->dims;
  for (size_t k = 0; k < axes.size(); ++k) {
    const auto a = static_cast<size_t>(axes[k]);
    const int64_t b = pads->ints[k];
    const int64_t e = pads->ints[k + axes.size()];
    if (!pad_defined(b, e, data->dims[a], mode)) {
      return std::nullopt;
    }
    begin[a] = b;
    out.dims[a] = data->dims[a] + b + e;
  }
  if (!out.fits_fold_limit()) {
    return std::nullopt;
  }
  out.allocate();
  std::vector<int64_t> counter(static_cast<size_t>(rank), 0);
  for (size_t flat = 0; flat < out.count(); ++flat) {
    int64_t source = 0;
    for (size_t d = 0; d < counter.size() && source >= 0; ++d) {
      const int64_t at = source_index(counter[d], begin[d], data->dims[d], mode);
      source = at < 0 ? -1 : source * data->dims[d] + at;
    }
    if (source >= 0) {
      copy_element(*data, static_cast<size_t>(source), out, flat);
    } else if (fill != nullptr) {
      copy_element(*fill, 0, out, flat);
    } // else the zero allocate() left
    for (size_t d = counter.size(); d-- > 0;) {
      if (++counter[d] < out.dims[d]) {
        break;
      }
      counter[d] = 0;
    }
  }
  return single(std::move(out));
}

} // namespace npucc::passes::fold
