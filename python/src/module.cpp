#include "bindings.h"
#include "npucc/version.h"

PYBIND11_MODULE(_npucc, module) {
  module.doc() = "npucc's C++ library, bound for the npucc package (use npucc, not this module)";
  module.attr("version") = npucc::k_version;
  npucc::python::bind_errors(module);
  npucc::python::bind_schedule(module);
  npucc::python::bind_compile(module);
  npucc::python::bind_cache(module);
}
