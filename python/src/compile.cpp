// npucc.compile: the CLI's compile options by name (compile_request()) and a compile through
// the cache (compile_cached()), with the GIL released while either works, so a compile in
// one thread lets the others run, compiles included.
#include "bindings.h"
#include "npucc/cache.h"
#include "npucc/compile_request.h"

#include <pybind11/functional.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

namespace py = pybind11;
using namespace pybind11::literals;

namespace npucc::python {

namespace {

using Warn = std::function<void(const std::string&)>;

py::dict result_of(const CachedCompile& cached, const CompileOptions& options) {
  py::list graphs;
  for (const auto& graph : cached.result.graphs) {
    graphs.append(py::dict("role"_a = graph.role, "precision"_a = graph.precision,
                           "path"_a = options.output_dir / graph.graph.file));
  }
  return py::dict("graphs"_a = graphs, "cache"_a = outcome_name(cached.outcome),
                  "reason"_a = cached.reason, "key"_a = cached.key,
                  "manifest_path"_a = cached.result.manifest_path);
}

py::dict compile_model(const std::filesystem::path& model, const std::filesystem::path& output,
                       const NamedValues& values, const Warn& warn,
                       const FunctionSpecs& functions) {
  CompileRequest request;
  {
    py::gil_scoped_release released;
    request = compile_request(model, output, option_values(values));
  }
  request.options.accuracy_functions = accuracy_functions(functions);
  for (const auto& warning : request.warnings) {
    warn(warning);
  }
  CachedCompile cached;
  {
    py::gil_scoped_release released;
    cached = compile_cached(request.options, request.cache, request.use);
  }
  for (const auto* warning : {&cached.remote_warning, &cached.warning}) {
    if (!warning->empty()) {
      warn(*warning);
    }
  }
  return result_of(cached, request.options);
}

// The components of the key compile() would use (explain_cache_key()): for tests.
std::vector<std::tuple<std::string, std::string, std::string>>
key_components(const std::filesystem::path& model, const NamedValues& values) {
  py::gil_scoped_release released;
  CompileRequest request = compile_request(model, "", option_values(values));
  std::vector<std::tuple<std::string, std::string, std::string>> out;
  for (const auto& component : explain_cache_key(request.options).components) {
    out.emplace_back(component.name, component.digest, component.value);
  }
  return out;
}

} // namespace

std::vector<OptionValue> option_values(const NamedValues& values) {
  std::vector<OptionValue> out;
  for (const auto& [name, value] : values) {
    out.push_back({name, value});
  }
  return out;
}

void bind_compile(py::module_& module) {
  module.def("compile_option_names", &compile_option_names,
             "the option names compile() takes, as `npucc compile --help` spells them");
  module.def(
      "compile_option_types",
      [] {
        std::vector<std::pair<std::string, std::string>> out;
        for (const auto& option : describe_options(compile_option_names())) {
          out.emplace_back(option.name, option.type);
        }
        return out;
      },
      "(name, type) of each option compile() takes, in order: type is flag, integer, path, "
      "size, seconds, train_mode, names, shapes or text");
  module.def("compile", &compile_model, py::arg("model"), py::arg("output"), py::arg("options"),
             py::arg("warn"), py::arg("functions") = FunctionSpecs{},
             "compile through the cache; options: (name, text) pairs; warn(line) for warnings; "
             "functions: (label, name, keyed, check, callable) of accuracy_target's functions");
  module.def("key_components", &key_components, py::arg("model"), py::arg("options"),
             "(name, digest, value) of each component of the model's cache key");
}

} // namespace npucc::python
