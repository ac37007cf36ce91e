#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace npucc::util {

// The string at `key`, or "" when there is none; a value of another type throws, as
// json::value(key, "") does. That call would do, but GCC 12 warns of a null dereference
// inside it (-Wnull-dereference, a false positive) once it is inlined.
inline std::string string_field(const nlohmann::json& object, const char* key) {
  auto found = object.find(key);
  return found == object.end() ? std::string() : found->get<std::string>();
}

} // namespace npucc::util
