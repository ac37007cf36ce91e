#include "pipeline/manifest_reader.h"

#include "npucc/error.h"
#include "util/json_fields.h"

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <type_traits>

namespace npucc::pipeline {

using nlohmann::json;

namespace {

// A size, count, offset or index: json's value() converts any number with a plain
// cast, and a float or a negative number out of the target's range is undefined
// behaviour (1e300 as an int), so only whole numbers in range are taken.
template <typename Int>
Int whole_number(const json& object, const char* key, Int fallback, const std::string& where) {
  if (!object.is_object()) {
    throw Error(where + ": cached manifest is not readable: \"" + key + "\" is not in an object");
  }
  if (!object.contains(key)) {
    return fallback;
  }
  // at(), not find(): GCC 12 sees find()'s end iterator as a possible null (-Wnull-dereference)
  const json& field = object.at(key);
  constexpr auto max = static_cast<uint64_t>(std::numeric_limits<Int>::max());
  if (field.is_number_unsigned() && field.get<uint64_t>() <= max) {
    return static_cast<Int>(field.get<uint64_t>());
  }
  if (field.is_number_integer()) {
    const int64_t value = field.get<int64_t>();
    if (value >= 0 ? static_cast<uint64_t>(value) <= max
                   : std::is_signed_v<Int> &&
                         value >= static_cast<int64_t>(std::numeric_limits<Int>::min())) {
      return static_cast<Int>(value);
    }
  }
  throw Error(where + ": cached manifest is not readable: \"" + key + "\" is " + field.dump() +
              ", not a whole number in range");
}

WrittenFile written_from(const json& file, const std::string& where) {
  WrittenFile out;
  out.file = util::string_field(file, "file");
  out.sha256 = util::string_field(file, "sha256");
  out.bytes = whole_number(file, "bytes", uint64_t{0}, where);
  return out;
}

// A hit prints the same precision summary as the compile that stored the entry: the
// reports come back as the JSON text CompileResult holds.
void read_precision_reports(const json& manifest, CompileResult& result) {
  auto report = manifest.find("precision_report");
  if (report != manifest.end() && report->is_object()) {
    result.precision_report = report->dump();
  }
  auto accuracy = manifest.find("accuracy");
  if (accuracy != manifest.end() && accuracy->is_object()) {
    result.accuracy_report = accuracy->dump();
  }
  auto high = manifest.find("high_precision_report");
  if (high != manifest.end() && high->is_object()) {
    result.high_precision_report = high->dump();
  }
}

} // namespace

CompileResult parse_cached_manifest(const json& manifest,
                                    const std::filesystem::path& manifest_path,
                                    const std::string& model_sha256) {
  const std::string where = manifest_path.string();
  CompileResult result;
  result.manifest_path = manifest_path;
  result.model_sha256 = model_sha256;
  if (!manifest.is_object()) {
    throw Error(where + ": cached manifest is not readable: not a JSON object");
  }
  try {
    for (const auto& graph : manifest.at("graphs")) {
      CompiledGraph compiled;
      compiled.role = util::string_field(graph, "role");
      compiled.precision = util::string_field(graph, "precision");
      compiled.graph = written_from(graph, where);
      for (const auto& data : graph.value("external_data", json::array())) {
        compiled.external_data.push_back(written_from(data, where));
      }
      result.graphs.push_back(std::move(compiled));
    }
    for (const auto& pass : manifest.value("passes", json::array())) {
      result.passes.push_back({util::string_field(pass, "name"), util::string_field(pass, "unit"),
                               whole_number(pass, "changed", int64_t{0}, where)});
    }
    read_precision_reports(manifest, result);
    const json& plan = manifest.at("memory_plan");
    result.memory_plan.available = plan.contains("available") && plan.at("available").get<bool>();
    result.memory_plan.reason = util::string_field(plan, "reason");
    result.memory_plan.arena_bytes = whole_number(plan, "arena_bytes", uint64_t{0}, where);
    result.memory_plan.lower_bound_bytes =
        whole_number(plan, "lower_bound_bytes", uint64_t{0}, where);
    result.memory_plan.unshared_bytes = whole_number(plan, "unshared_bytes", uint64_t{0}, where);
    result.memory_plan.alignment = whole_number(plan, "alignment", uint64_t{64}, where);
    for (const auto& tensor : plan.value("tensors", json::array())) {
      result.memory_plan.tensors.push_back(
          {util::string_field(tensor, "name"), whole_number(tensor, "bytes", uint64_t{0}, where),
           whole_number(tensor, "offset", uint64_t{0}, where),
           whole_number(tensor, "first", 0, where), whole_number(tensor, "last", 0, where)});
    }
  } catch (const json::exception& e) {
    throw Error(where + ": cached manifest is not readable: " + e.what());
  }
  return result;
}

} // namespace npucc::pipeline
