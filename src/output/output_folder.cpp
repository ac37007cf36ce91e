#include "output/output_folder.h"

#include "output/manifest.h"

#include "output/manifest.h"

#include "model/graph_files.h"
#include "npucc/error.h"
#include "util/disk.h"
#include "util/file_io.h"
#include "util/interrupt.h"
#include "util/json_fields.h"
#include "util/test_point.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <unistd.h>
#include <vector>

namespace npucc::output {

namespace fs = std::filesystem;

namespace {

constexpr const char* k_manifest = "manifest.json";

bool is_plain_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

// Every name a compile may write: manifest.json, each role's graph and its external data,
// the weights its graphs share.
std::set<std::string> names_npucc_writes() {
  std::set<std::string> names{k_manifest, k_shared_weights_file, k_drift_report_file};
  for (const char* role : {"high", "low", "emulation"}) {
    names.insert(std::string(role) + ".onnx");
    names.insert(std::string(role) + ".onnx" + k_external_data_suffix);
  }
  return names;
}

void unlink_checked(const fs::path& path) {
  if (util::disk().unlink(path) != 0 && errno != ENOENT) {
    throw Error(path.string() +
                ": cannot remove the earlier compile's file: " + std::strerror(errno));
  }
}

// -o names the folder the graphs go into. A path that is a file, or that reads like a
// graph's file name ("out/x.onnx"), is a user who expected -o to name the output file:
// the folder "x.onnx" it would create is refused with what -o means.
void refuse_file_target(const fs::path& target) {
  std::error_code ec;
  const std::string what = "-o names the folder that gets high.onnx, low.onnx and manifest.json";
  if (fs::exists(target, ec) && !fs::is_directory(target, ec)) {
    throw usage_error(target.string() + ": exists and is not a folder",
                      what + "; choose another -o OUTDIR");
  }
  if (target.extension() == ".onnx" && !fs::is_directory(target, ec)) {
    fs::path parent = target.parent_path();
    throw usage_error(target.string() + ": names an .onnx file, not a folder",
                      what + "; try -o " + (parent.empty() ? "out" : parent.string()));
  }
}

// The compile must neither overwrite nor remove its own model, and must not overwrite a
// file npucc did not write unless told to.
void check_target(const CompileOptions& options) {
  const fs::path& target = options.output_dir;
  std::error_code ec;
  if (!fs::is_directory(target, ec)) {
    return;
  }
  std::set<std::string> earlier = files_of_earlier_compile(target);
  std::set<std::string> names = names_npucc_writes();
  names.insert(earlier.begin(), earlier.end());
  for (const auto& name : names) {
    fs::path path = target / name;
    if (!fs::exists(fs::symlink_status(path, ec))) {
      continue;
    }
    if (!options.model_path.empty() && fs::equivalent(path, options.model_path, ec)) {
      bool same_name = fs::absolute(options.model_path).lexically_normal() ==
                       fs::absolute(path).lexically_normal();
      throw Error(options.model_path.string() + ": input file is also an output" +
                      (same_name ? std::string() : " (the same file as " + path.string() + ")"),
                  "compile into another folder (-o)");
    }
    if (options.replace_output == OutputReplace::npucc_files && earlier.count(name) == 0) {
      throw Error(path.string() + ": exists and was not written by an npucc compile (no " +
                      "manifest.json in the folder lists it)",
                  "choose another -o OUTDIR, or pass --force to replace it");
    }
  }
}

} // namespace

std::set<std::string> files_of_earlier_compile(const fs::path& dir) {
  std::set<std::string> out;
  try {
    auto manifest = nlohmann::json::parse(util::read_file(dir / k_manifest));
    if (!manifest.is_object() || util::string_field(manifest, "format") != "npucc-manifest") {
      return out;
    }
    out.insert(k_manifest);
    // A manifest may come from a cache entry anyone in the group could forge: it can
    // only narrow, never widen, what is removed to the names npucc itself writes.
    const std::set<std::string> ours = names_npucc_writes();
    auto add = [&](const std::string& name) {
      if (is_plain_name(name) && ours.count(name) != 0) {
        out.insert(name);
      }
    };
    for (const auto& graph : manifest.at("graphs")) {
      add(util::string_field(graph, "file"));
      for (const auto& data : graph.value("external_data", nlohmann::json::array())) {
        add(util::string_field(data, "file"));
      }
    }
  } catch (const std::exception&) {
    // no manifest, or not one of ours: nothing in the folder is known to be npucc's
  }
  return out;
}

OutputFolder::OutputFolder(const CompileOptions& options) : m_target(options.output_dir) {
  std::error_code ec;
  if (m_target.empty()) {
    throw usage_error("no output folder given", "pass -o OUTDIR");
  }
  refuse_file_target(m_target);
  check_target(options);
  fs::path parent = fs::absolute(m_target, ec).parent_path();
  if (!fs::is_directory(parent, ec)) {
    fs::create_directories(parent, ec);
    if (ec) {
      throw Error(parent.string() + ": cannot create the output's parent folder: " + ec.message());
    }
  }
  m_staging = util::temporary_sibling(fs::absolute(m_target).lexically_normal());
  // On Ctrl-C, "OUT.tmp.PID.*" beside the output goes (util/interrupt.h).
  std::string staging_name = m_staging.filename().string();
  util::sweep_on_interrupt(m_staging.parent_path(),
                           staging_name.substr(0, staging_name.rfind(".tmp.") + 5));
  if (!fs::create_directory(m_staging, ec) || ec) {
    throw Error(m_staging.string() + ": cannot create a staging folder: " + ec.message());
  }
  util::test_point("output:staging-created");
}

void check_output_folder(const CompileOptions& options) {
  OutputFolder probe(options); // its staging folder goes with it
}

OutputFolder::~OutputFolder() {
  if (!m_published) {
    std::error_code ec;
    fs::remove_all(m_staging, ec); // our own fresh folder
  }
}

void OutputFolder::publish() {
  // Whole or not at all: a signal from here on waits until the folder holds the new
  // compile (or, on an error, is left as the error leaves it), then stops the command.
  util::DeferInterrupts whole;
  util::test_point("publish:begin");
  std::error_code ec;
  if (!fs::exists(m_target, ec)) {
    if (util::disk().rename(m_staging, m_target) != 0) {
      throw Error(m_target.string() +
                  ": cannot move the output into place: " + std::strerror(errno));
    }
    m_published = true;
    util::count_interrupt_progress();
    return;
  }
  replace_earlier_compile();
  m_published = true;
  util::count_interrupt_progress();
}

void OutputFolder::replace_earlier_compile() {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(m_staging)) {
    if (entry.path().filename() != k_manifest) {
      files.push_back(entry.path().filename().string());
    }
  }
  // Read before it goes: what the earlier compile wrote, and is not written again.
  std::set<std::string> earlier = files_of_earlier_compile(m_target);
  unlink_checked(m_target / k_manifest); // from here on the folder says "incomplete"
  util::test_point("publish:manifest-removed");
  for (const auto& name : earlier) {
    if (std::find(files.begin(), files.end(), name) == files.end()) {
      unlink_checked(m_target / name);
      util::test_point(("publish:removed:" + name).c_str());
    }
  }
  if (fs::exists(m_staging / k_manifest)) {
    files.push_back(k_manifest);
  }
  for (const auto& name : files) {
    if (util::disk().rename(m_staging / name, m_target / name) != 0) {
      throw Error((m_target / name).string() + ": cannot write: " + std::strerror(errno));
    }
    // A hit links both into the same cache file; rename() of one link onto another of the
    // same file does nothing (POSIX) and leaves the staged name behind.
    if (util::disk().unlink(m_staging / name) != 0 && errno != ENOENT) {
      throw Error((m_staging / name).string() + ": cannot remove: " + std::strerror(errno));
    }
    util::test_point(("publish:renamed:" + name).c_str());
  }
  if (::rmdir(m_staging.c_str()) != 0) {
    throw Error(m_staging.string() + ": cannot remove the staging folder: " + std::strerror(errno));
  }
}

} // namespace npucc::output
