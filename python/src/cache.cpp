// npucc.Cache: the public Cache (npucc/cache_maintenance.h) opened with the options of
// `npucc cache` commands (cache_request()); every call that reads or changes the folder
// releases the GIL. Results go to Python as dicts of plain values.
#include "bindings.h"
#include "npucc/cache_maintenance.h"
#include "npucc/compile_request.h"

#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

namespace py = pybind11;
using namespace pybind11::literals;

namespace npucc::python {

namespace {

// An entry as the CLI's `cache ls --json` presents it (cache_entry_json): JSON text, which
// the Python side loads.
std::string entry_json(const CacheEntry& entry) {
  return cache_entry_json(entry);
}

py::dict stats_dict(const CacheStatistics& stats) {
  return py::dict("dir"_a = stats.dir, "entries"_a = stats.entries, "bytes"_a = stats.bytes,
                  "states"_a = stats.states, "counters"_a = stats.counters);
}

// Each item converted by `convert`, as a Python list.
template <typename Item, typename Convert>
py::list list_of(const std::vector<Item>& items, Convert convert) {
  py::list out;
  for (const auto& item : items) {
    out.append(convert(item));
  }
  return out;
}

py::dict problem_dict(const CacheProblem& problem) {
  return py::dict("kind"_a = problem.kind, "path"_a = problem.path, "detail"_a = problem.detail,
                  "fixed"_a = problem.fixed, "left_alone"_a = problem.left_alone);
}

py::dict verify_dict(const CacheVerifyResult& result) {
  return py::dict("entries"_a = result.entries, "bytes"_a = result.bytes,
                  "problems"_a = list_of(result.problems, problem_dict),
                  "failures"_a = result.failures);
}

py::dict removed_dict(const RemovedEntry& entry) {
  return py::dict("key"_a = entry.key, "model"_a = entry.model,
                  "compiler_version"_a = entry.compiler_version, "bytes"_a = entry.bytes,
                  "why"_a = entry.why);
}

py::dict removal_dict(const CacheRemoval& removal) {
  return py::dict(
      "removed"_a = list_of(removal.removed, removed_dict), "freed"_a = removal.freed,
      "temporaries"_a = removal.temporaries, "temporary_bytes"_a = removal.temporary_bytes,
      "unused_blobs"_a = removal.unused_blobs, "unused_blob_bytes"_a = removal.unused_blob_bytes,
      "failures"_a = removal.failures);
}

// Cache with the warnings of its settings, for the Python side to show.
struct OpenedCache {
  Cache cache;
  std::vector<std::string> warnings;
};

OpenedCache open_cache(const NamedValues& values) {
  std::vector<OptionValue> options = option_values(values);
  py::gil_scoped_release released;
  CacheRequest request = cache_request(options);
  return {Cache(request.cache), request.warnings};
}

// Calls `work` on the cache with the GIL released, then converts its result with it held.
template <typename Work, typename Convert>
py::dict released(const OpenedCache& opened, Work work, Convert convert) {
  auto result = [&] {
    py::gil_scoped_release gil;
    return work(opened.cache);
  }();
  return convert(result);
}

py::dict purge(const OpenedCache& opened, bool all, std::optional<int64_t> older_than,
               std::optional<uint64_t> max_size, bool dry_run) {
  PurgeRequest request{all, older_than, max_size, dry_run};
  return released(
      opened, [&](const Cache& cache) { return cache.purge(request); }, removal_dict);
}

py::dict invalidate(const OpenedCache& opened, std::optional<std::string> compiler_version,
                    const std::string& model, const std::string& key_prefix, bool dry_run) {
  InvalidateRequest request{std::move(compiler_version), model, key_prefix, dry_run};
  return released(
      opened, [&](const Cache& cache) { return cache.invalidate(request); }, removal_dict);
}

py::list entries(const OpenedCache& opened) {
  std::vector<CacheEntry> found;
  {
    py::gil_scoped_release gil;
    found = opened.cache.entries();
  }
  return list_of(found, entry_json);
}

void init_cache(const std::filesystem::path& dir, const std::string& shared) {
  CacheSharing sharing = parse_cache_sharing(shared, "--shared");
  py::gil_scoped_release gil;
  init_cache_dir(dir, sharing);
}

} // namespace

void bind_cache(py::module_& module) {
  module.def("cache_option_names", &cache_option_names,
             "the option names Cache() takes, as `npucc cache ls --help` spells them");
  py::class_<OpenedCache>(module, "Cache")
      .def(py::init(&open_cache), py::arg("options"))
      .def_property_readonly("dir", [](const OpenedCache& c) { return c.cache.config().dir; })
      .def_readonly("warnings", &OpenedCache::warnings)
      .def("entries", &entries)
      .def("stats",
           [](const OpenedCache& c) {
             return released(
                 c, [](const Cache& cache) { return cache.stats(); }, stats_dict);
           })
      .def("zero_stats",
           [](const OpenedCache& c) {
             py::gil_scoped_release gil;
             c.cache.zero_stats();
           })
      .def(
          "verify",
          [](const OpenedCache& c, bool fix) {
            return released(
                c, [fix](const Cache& cache) { return cache.verify(fix); }, verify_dict);
          },
          py::arg("fix"))
      .def("purge", &purge, py::arg("all"), py::arg("older_than"), py::arg("max_size"),
           py::arg("dry_run"))
      .def("invalidate", &invalidate, py::arg("compiler_version"), py::arg("model"),
           py::arg("key_prefix"), py::arg("dry_run"));
  module.def("init_cache", &init_cache, py::arg("dir"), py::arg("shared"));
  module.def(
      "parse_age", [](const std::string& text) { return parse_age(text); }, py::arg("text"),
      "seconds of \"7d\", \"12h\", \"30m\", \"45s\"");
  module.def(
      "parse_size",
      [](const std::string& text, const std::string& where) {
        return parse_size_setting(text, where);
      },
      py::arg("text"), py::arg("where"), "bytes of \"10G\", \"512MiB\", \"4096\"");
}

} // namespace npucc::python
