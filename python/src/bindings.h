#pragma once

// The extension module npucc._npucc: thin bindings of the public C++ API (include/npucc/).
// The package npucc (python/npucc/__init__.py) wraps them in Python classes with
// docstrings; nothing here is meant to be used directly.

#include <pybind11/pybind11.h>

namespace npucc::python {

// npucc.Error (a RuntimeError) and npucc.UsageError (an Error and a ValueError), and the
// translation of npucc::Error into them.
void bind_errors(pybind11::module_& module);
// parse_accelerate_train_mode, PrecisionSchedule.
void bind_schedule(pybind11::module_& module);
// compile_option_names, compile.
void bind_compile(pybind11::module_& module);
// cache_option_names, Cache, init_cache, parse_age, parse_size.
void bind_cache(pybind11::module_& module);

} // namespace npucc::python
