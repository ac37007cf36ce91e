// npucc::Error becomes npucc.Error carrying the line the CLI prints after "npucc: error: ";
// a usage error (a bad option value, exit status 2 at the CLI) becomes npucc.UsageError,
// which is also a ValueError, so `except ValueError` catches a bad value as Python code
// expects while `except npucc.Error` still catches everything npucc raises.
#include "bindings.h"
#include "npucc/error.h"

namespace py = pybind11;

namespace npucc::python {

namespace {

constexpr const char* k_error_doc =
    "An npucc operation failed.\n\n"
    "str(error) is the one line `npucc` prints after \"npucc: error: \" for the same\n"
    "failure. Attributes: message (the line without the hint), hint (what would fix it,\n"
    "or \"\"), exit_status (the CLI's exit status: 1, or 2 for a bad option value).";

constexpr const char* k_usage_error_doc =
    "A bad option or argument value (the CLI's exit status 2).\n\n"
    "Both an npucc.Error and a ValueError.";

// Owned by the module (its attributes); these keep borrowed pointers for the translator.
PyObject* g_error = nullptr;
PyObject* g_usage_error = nullptr;

void raise(const Error& error) {
  const bool usage = error.status() == ExitStatus::usage;
  py::handle type(usage ? g_usage_error : g_error);
  py::object instance = type(error.line());
  instance.attr("message") = error_line(error.what());
  instance.attr("hint") = error_line(error.hint());
  instance.attr("exit_status") = static_cast<int>(error.status());
  PyErr_SetObject(type.ptr(), instance.ptr());
}

} // namespace

void bind_errors(py::module_& module) {
  g_error = PyErr_NewExceptionWithDoc("npucc.Error", k_error_doc, PyExc_RuntimeError, nullptr);
  if (g_error == nullptr) {
    throw py::error_already_set();
  }
  module.add_object("Error", py::handle(g_error));
  py::tuple bases = py::make_tuple(py::handle(g_error), py::handle(PyExc_ValueError));
  g_usage_error =
      PyErr_NewExceptionWithDoc("npucc.UsageError", k_usage_error_doc, bases.ptr(), nullptr);
  if (g_usage_error == nullptr) {
    throw py::error_already_set();
  }
  module.add_object("UsageError", py::handle(g_usage_error));
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) {
        std::rethrow_exception(thrown);
      }
    } catch (const Error& error) {
      raise(error);
    }
  });
}

} // namespace npucc::python
