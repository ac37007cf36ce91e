#include "bindings.h"
#include "compiler/build_report.h"
#include "npucc/version.h"

PYBIND11_MODULE(_npucc, module) {
  module.doc() = "npucc's C++ library, bound for the npucc package (use npucc, not this module)";
  module.attr("version") = npucc::k_version;
  module.def("build_info_json", &npucc::compiler::version_json,
             pybind11::call_guard<pybind11::gil_scoped_release>(),
             "`npucc --version --json`'s document (use npucc.build_info())");
  npucc::python::bind_errors(module);
  npucc::python::bind_schedule(module);
  npucc::python::bind_compile(module);
  npucc::python::bind_cache(module);
}
