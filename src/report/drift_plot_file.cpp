#include "report/drift_plot_file.h"

#include "npucc/error.h"
#include "report/drift_document.h"
#include "report/drift_plot.h"
#include "util/file_io.h"
#include "util/safe_open.h"
#include "util/sha256.h"
#include "util/strings.h"

#include <cstdio>

namespace npucc::report {

namespace fs = std::filesystem;

namespace {

constexpr const char* k_how_to_get_drift =
    "compile with --check-accuracy and --accuracy-report nodes to write one";

nlohmann::json read_output_manifest(const fs::path& folder, const fs::path& output) {
  const fs::path path = folder / "manifest.json";
  std::error_code error;
  if (!fs::exists(path, error)) {
    throw Error(output.string() + ": not an npucc output folder (no manifest.json)",
                "name the folder npucc compile -o wrote");
  }
  nlohmann::json manifest = nlohmann::json::parse(util::read_file(path), nullptr, false);
  if (!manifest.is_object() || manifest.find("format") == manifest.end() ||
      manifest.at("format") != "npucc-manifest") {
    throw Error(path.string() + ": not an npucc manifest", "name the folder npucc compile -o wrote");
  }
  return manifest;
}

// Whether the file at `svg` may be replaced: missing, or an SVG document (one npucc wrote,
// or another picture the user names as the output).
void check_replaceable(const fs::path& svg) {
  std::error_code error;
  const fs::file_status status = fs::status(svg, error);
  if (!fs::exists(status)) {
    return;
  }
  if (!fs::is_regular_file(status)) {
    throw Error(svg.string() + ": not a regular file", "name a .svg file to write");
  }
  auto opened = util::open_regular_file(svg, util::OpenRule::named_by_user());
  if (!opened) {
    throw opened.error();
  }
  auto head = util::read_up_to(opened->fd.get(), 4096, svg);
  if (!head) {
    throw head.error();
  }
  if (head->find("<svg") == std::string::npos) {
    throw Error(svg.string() + ": exists and is not an SVG picture; not replaced",
                "name a new file, or remove this one first");
  }
}

// What a picture shows, in a line for a terminal (names through util::printable).
std::string drift_summary(const nlohmann::json& drift) {
  const DriftDocument document = read_drift_document(drift);
  std::string line = std::to_string(document.values.size()) +
                     (document.values.size() == 1 ? " value" : " values");
  if (!document.threshold_below) {
    return line;
  }
  char below[32];
  std::snprintf(below, sizeof below, "%.6g", *document.threshold_below);
  if (!document.first_crossing) {
    return line + ", none below " + below;
  }
  const DriftValue& first = document.values[*document.first_crossing];
  return line + ", first below " + below + ": #" + std::to_string(first.order) + " " +
         util::cut_for_message(first.node) + " (" + util::cut_for_message(first.op_type) + ")";
}

} // namespace

OutputDriftReport drift_report_of_output(const fs::path& output) {
  std::error_code error;
  const fs::path folder = fs::is_directory(output, error) ? output
                          : output.has_parent_path() ? output.parent_path() : fs::path(".");
  const nlohmann::json manifest = read_output_manifest(folder, output);
  // Only the report the manifest names, at the digest it records: a drift.json an earlier
  // compile left in the folder is not this output's report.
  auto named = manifest.find("drift_report");
  if (named == manifest.end() || !named->is_object() || !named->contains("file") ||
      !named->at("file").is_string() || !named->contains("sha256") ||
      !named->at("sha256").is_string()) {
    throw Error(folder.string() + ": this output has no drift report", k_how_to_get_drift);
  }
  const std::string name = named->at("file").get<std::string>();
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
    throw Error((folder / "manifest.json").string() + ": names the drift report \"" +
                util::cut_for_message(name) + "\", which is not a file in the output folder");
  }
  OutputDriftReport report{folder / name, {}};
  if (!fs::exists(fs::symlink_status(report.path, error))) {
    throw Error(report.path.string() + ": missing (the manifest names it as the drift report)",
                "compile again with --accuracy-report nodes");
  }
  report.text = util::read_file(report.path);
  if (util::sha256_hex(report.text) != named->at("sha256").get<std::string>()) {
    throw Error(report.path.string() + ": not the drift report the compile wrote (its SHA-256 "
                "differs from the manifest's)",
                "compile again with --accuracy-report nodes");
  }
  return report;
}

std::string write_drift_plot(const nlohmann::json& drift, const fs::path& svg) {
  const std::string picture = render_drift_svg(drift);
  check_replaceable(svg);
  util::write_file_atomic(svg, picture, util::Durability::unsynced);
  return drift_summary(drift);
}

std::string write_drift_plot_file(const OutputDriftReport& report, const fs::path& svg) {
  const fs::path& drift_json = report.path;
  const nlohmann::json drift = nlohmann::json::parse(report.text, nullptr, false);
  if (drift.is_discarded()) {
    throw Error(drift_json.string() + ": not valid JSON", k_how_to_get_drift);
  }
  std::string picture;
  try {
    picture = render_drift_svg(drift);
  } catch (const Error& e) {
    throw Error(drift_json.string() + ": " + e.what(), e.hint(), e.status());
  }
  check_replaceable(svg);
  util::write_file_atomic(svg, picture, util::Durability::unsynced);
  return drift_summary(drift);
}

} // namespace npucc::report
