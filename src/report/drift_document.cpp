#include "report/drift_document.h"

#include "npucc/error.h"

#include <cmath>

namespace npucc::report {

namespace {

using nlohmann::json;

[[noreturn]] void invalid_drift(const std::string& where, const std::string& what) {
  throw Error("invalid drift report: " + where + ": " + what,
              "write it anew with npucc compile --accuracy-report nodes");
}

const char* json_kind(const json& value) {
  return value.is_null() ? "null" : value.is_string() ? "a string" : value.is_boolean() ? "a boolean"
       : value.is_number() ? "a number" : value.is_array() ? "an array" : "an object";
}

// The member `key` of `object`; nullptr when absent.
const json* drift_member(const json& object, const char* key) {
  auto found = object.find(key);
  return found == object.end() ? nullptr : &*found;
}

std::string text_field(const json& object, const char* key, const std::string& where, bool required) {
  const json* value = drift_member(object, key);
  if (value == nullptr || (!required && value->is_null())) {
    if (required) {
      invalid_drift(where + "." + key, "missing");
    }
    return {};
  }
  if (!value->is_string()) {
    invalid_drift(where + "." + key, std::string(json_kind(*value)) + ", not a string");
  }
  return value->get<std::string>();
}

// A finite number in [low, high]; nullopt for null or (when not required) absence.
std::optional<double> number_field(const json& object, const char* key, const std::string& where,
                                   double low, double high, bool required = false) {
  const json* value = drift_member(object, key);
  if (value == nullptr || value->is_null()) {
    if (required) {
      invalid_drift(where + "." + key, value == nullptr ? "missing" : "null, not a number");
    }
    return std::nullopt;
  }
  if (!value->is_number()) {
    invalid_drift(where + "." + key, std::string(json_kind(*value)) + ", not a number");
  }
  const double number = value->get<double>();
  if (!std::isfinite(number) || number < low || number > high) {
    invalid_drift(where + "." + key, "out of range");
  }
  return number;
}

// An index into values (first_crossing, top_offenders[i]).
size_t index_field(const json& value, const std::string& where, size_t count) {
  if (!value.is_number_integer() || value.get<long long>() < 0 ||
      static_cast<unsigned long long>(value.get<long long>()) >= count) {
    invalid_drift(where, "not an index into values (0 to " + std::to_string(count) + ")");
  }
  return static_cast<size_t>(value.get<long long>());
}

DriftValue read_drift_value(const json& entry, const std::string& where, size_t index) {
  if (!entry.is_object()) {
    invalid_drift(where, std::string(json_kind(entry)) + ", not an object");
  }
  DriftValue value;
  const auto order = number_field(entry, "order", where, 0, 1e15);
  value.order = order ? static_cast<long>(*order) : static_cast<long>(index);
  value.node = text_field(entry, "node", where, true);
  value.op_type = text_field(entry, "op_type", where, false);
  value.value = text_field(entry, "value", where, false);
  value.graph = text_field(entry, "graph", where, false);
  value.stored = text_field(entry, "stored", where, true);
  // A cosine a little past +-1 is rounding in the sums; anything further is no cosine.
  value.cosine = number_field(entry, "cosine", where, -1.001, 1.001);
  value.cosine_undefined = text_field(entry, "cosine_undefined", where, false);
  value.max_abs_error = number_field(entry, "max_abs_error", where, 0, HUGE_VAL);
  value.flush_share = number_field(entry, "flush_share", where, 0, 1).value_or(0);
  value.overflow_share = number_field(entry, "overflow_share", where, 0, 1).value_or(0);
  value.added_drift = number_field(entry, "added_drift", where, -HUGE_VAL, HUGE_VAL);
  return value;
}

void read_drift_header(const json& drift, DriftDocument& document) {
  if (!drift.is_object() || !drift_member(drift, "format") || drift.at("format") != "npucc-drift") {
    throw Error("not a drift report (its \"format\" is not \"npucc-drift\")");
  }
  const json* version = drift_member(drift, "version");
  if (version == nullptr || !version->is_number_integer() || version->get<long long>() < 1) {
    invalid_drift("version", "missing or not a positive integer");
  }
  if (version->get<long long>() > k_drift_format_version) {
    throw Error("drift report format version " + std::to_string(version->get<long long>()) +
                    " is newer than this npucc reads (" + std::to_string(k_drift_format_version) + ")",
                "use the npucc that wrote it");
  }
  document.low_type = text_field(drift, "low_type", "drift", true);
  document.sample_sets = static_cast<long>(number_field(drift, "sample_sets", "drift", 0, 1e12, true).value_or(0));
  document.runtime_runs = static_cast<long>(number_field(drift, "runtime_runs", "drift", 0, 1e12).value_or(0));
  const json* threshold = drift_member(drift, "threshold");
  if (threshold != nullptr && !threshold->is_null()) {
    if (!threshold->is_object()) {
      invalid_drift("threshold", std::string(json_kind(*threshold)) + ", not an object");
    }
    document.threshold_metric = text_field(*threshold, "metric", "threshold", true);
    document.threshold_below = number_field(*threshold, "below", "threshold", -HUGE_VAL, HUGE_VAL, true);
  }
}

void read_drift_callouts(const json& drift, DriftDocument& document) {
  const size_t count = document.values.size();
  const json* first = drift_member(drift, "first_crossing");
  if (first != nullptr && !first->is_null()) {
    document.first_crossing = index_field(*first, "first_crossing", count);
  }
  const json* offenders = drift_member(drift, "top_offenders");
  if (offenders != nullptr && !offenders->is_null()) {
    if (!offenders->is_array()) {
      invalid_drift("top_offenders", std::string(json_kind(*offenders)) + ", not an array");
    }
    for (size_t i = 0; i < offenders->size(); ++i) {
      document.top_offenders.push_back(
          index_field((*offenders)[i], "top_offenders[" + std::to_string(i) + "]", count));
    }
  }
}

} // namespace

DriftDocument read_drift_document(const json& drift) {
  DriftDocument document;
  read_drift_header(drift, document);
  const json* values = drift_member(drift, "values");
  if (values == nullptr || !values->is_array()) {
    invalid_drift("values", values == nullptr ? "missing" : std::string(json_kind(*values)) + ", not an array");
  }
  document.values.reserve(values->size());
  for (size_t i = 0; i < values->size(); ++i) {
    document.values.push_back(read_drift_value((*values)[i], "values[" + std::to_string(i) + "]", i));
  }
  read_drift_callouts(drift, document);
  return document;
}

} // namespace npucc::report
