#include "compiler/build_report.h"

#include "npucc/version.h"
#include "runtime/library_location.h"
#include "util/build_info.h"

#include <nlohmann/json.hpp>

namespace npucc::compiler {

namespace {

std::string onnxruntime_text(const runtime::OnnxRuntimeReport& ort) {
  if (!ort.built_with) {
    return "ONNX Runtime: none (" + ort.problem + ")";
  }
  std::string where = "C API " + std::to_string(ort.c_api) + ", " + ort.library;
  if (!ort.problem.empty()) {
    return "ONNX Runtime not loaded (" + where + "): " + ort.problem;
  }
  return "ONNX Runtime " + ort.version + " (" + where + ")";
}

// A JSON string, or null when `text` is empty.
nlohmann::json string_or_null(const std::string& text) {
  return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text);
}

} // namespace

std::string version_line() {
  const util::BuildInfo& build = util::build_info();
  std::string commit = "commit " + build.commit + (build.commit_modified ? ", modified" : "");
  return std::string("npucc ") + k_version + " (" + commit + "; " + build.build_type +
         " build, " + build.cxx_compiler + ") ONNX " + build.onnx + ", protobuf " +
         build.protobuf + ", " + onnxruntime_text(runtime::report_onnxruntime());
}

std::string version_json() {
  const util::BuildInfo& build = util::build_info();
  const runtime::OnnxRuntimeReport ort = runtime::report_onnxruntime();
  // The convention of every --json document (cli/json_document.h): its format and version.
  nlohmann::json document = {
      {"format", "npucc-version"},
      {"format_version", 1},
      {"npucc",
       {{"version", k_version},
        {"commit", build.commit},
        {"commit_modified", build.commit_modified},
        {"build_type", build.build_type},
        {"compiler", build.cxx_compiler}}},
      {"onnx", {{"version", build.onnx}}},
      {"protobuf", {{"version", build.protobuf}}},
      {"onnxruntime",
       {{"built_with", ort.built_with},
        {"c_api", ort.built_with ? nlohmann::json(ort.c_api) : nlohmann::json(nullptr)},
        {"library", string_or_null(ort.library)},
        {"version", string_or_null(ort.version)},
        {"problem", string_or_null(ort.problem)}}}};
  // A path need not be UTF-8: replaced, not thrown on.
  return document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace npucc::compiler
