// npucc.Target's functions as the library calls them (npucc/compile.h: AccuracyFunction): the
// compile runs with the GIL released, so each call takes it, hands the outputs over as NumPy
// arrays and gives it back. A Python exception becomes a C++ one carrying its type and
// message (the library names the function and the set); the Python layer (_compile.py) keeps
// the exception itself and chains it to the npucc.Error.
#include "bindings.h"

#include <pybind11/numpy.h>

#include <cstring>
#include <memory>
#include <stdexcept>

namespace py = pybind11;

namespace npucc::python {

namespace {

// bfloat16 has no NumPy type: its values as float32 (the upper half of a float32's bits).
py::array bfloat16_as_float32(const OutputTensor& tensor) {
  py::array_t<float> out(tensor.shape);
  const size_t count = tensor.bytes.size() / 2;
  auto* values = out.mutable_data();
  for (size_t i = 0; i < count; ++i) {
    uint16_t half = 0;
    std::memcpy(&half, tensor.bytes.data() + 2 * i, 2);
    const uint32_t bits = static_cast<uint32_t>(half) << 16;
    std::memcpy(&values[i], &bits, 4);
  }
  return out;
}

py::dict outputs_dict(const std::vector<OutputTensor>& tensors) {
  py::dict out;
  for (const auto& tensor : tensors) {
    if (tensor.type == "bfloat16") {
      out[py::str(tensor.name)] = bfloat16_as_float32(tensor);
      continue;
    }
    py::array array(py::dtype(tensor.type), tensor.shape);
    std::memcpy(array.mutable_data(), tensor.bytes.data(),
                std::min<size_t>(tensor.bytes.size(), static_cast<size_t>(array.nbytes())));
    out[py::str(tensor.name)] = array;
  }
  return out;
}

// The Python callable, released with the GIL held whichever thread drops the last copy.
std::shared_ptr<py::object> held(py::object callable) {
  return {new py::object(std::move(callable)), [](py::object* object) {
            py::gil_scoped_acquire gil;
            delete object;
          }};
}

} // namespace

std::vector<AccuracyFunction> accuracy_functions(const FunctionSpecs& specs) {
  std::vector<AccuracyFunction> out;
  for (const auto& [label, name, keyed, check, callable] : specs) {
    auto function = held(callable);
    AccuracyFunction made{label, name, keyed, check, {}};
    made.compute = [function](const std::vector<OutputTensor>& high,
                              const std::vector<OutputTensor>& low) -> double {
      py::gil_scoped_acquire gil;
      try {
        return (*function)(outputs_dict(high), outputs_dict(low)).cast<double>();
      } catch (py::error_already_set& error) {
        const std::string type = py::str(error.type().attr("__name__"));
        throw std::runtime_error(type + ": " + std::string(py::str(error.value())));
      } catch (const py::cast_error&) {
        throw std::runtime_error("it returned something that is not a number");
      }
    };
    out.push_back(std::move(made));
  }
  return out;
}

} // namespace npucc::python
