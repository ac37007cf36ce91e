#pragma once

// The extension module npucc._npucc: thin bindings of the public C++ API (include/npucc/).
// The package npucc (python/npucc/__init__.py) wraps them in Python classes with
// docstrings; nothing here is meant to be used directly.

#include "npucc/compile_request.h"

#include <pybind11/pybind11.h>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace npucc::python {

// Options as the Python side passes them: (name, text) pairs, names as the CLI spells them.
using NamedValues = std::vector<std::pair<std::string, std::string>>;
std::vector<OptionValue> option_values(const NamedValues& values);

// npucc.Target's functions from the Python layer: (label, name, keyed, check, callable) each,
// the callable taking (high_outputs, low_outputs) dicts and returning a float.
using FunctionSpecs =
    std::vector<std::tuple<std::string, std::string, bool, bool, pybind11::object>>;
std::vector<AccuracyFunction> accuracy_functions(const FunctionSpecs& specs);

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
