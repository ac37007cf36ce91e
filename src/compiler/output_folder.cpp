#include "compiler/output_folder.h"

#include "npucc/error.h"
#include "util/file_io.h"

#include <cstdio>
#include <vector>

namespace npucc::compiler {

namespace fs = std::filesystem;

OutputFolder::OutputFolder(fs::path target) : m_target(std::move(target)) {
  std::error_code ec;
  if (m_target.empty()) {
    throw usage_error("no output folder given", "pass -o OUTDIR");
  }
  if (fs::exists(m_target, ec) && !fs::is_directory(m_target, ec)) {
    throw Error(m_target.string() + ": exists and is not a folder", "choose another -o OUTDIR");
  }
  fs::path parent = fs::absolute(m_target, ec).parent_path();
  if (!fs::is_directory(parent, ec)) {
    fs::create_directories(parent, ec);
    if (ec) {
      throw Error(parent.string() + ": cannot create the output's parent folder: " + ec.message());
    }
  }
  m_staging = util::temporary_sibling(fs::absolute(m_target).lexically_normal());
  if (!fs::create_directory(m_staging, ec) || ec) {
    throw Error(m_staging.string() + ": cannot create a staging folder: " + ec.message());
  }
}

void check_output_folder(const fs::path& target) {
  OutputFolder probe(target); // its staging folder goes with it
}

OutputFolder::~OutputFolder() {
  if (!m_published) {
    std::error_code ec;
    fs::remove_all(m_staging, ec);
  }
}

void OutputFolder::publish() {
  std::error_code ec;
  if (!fs::exists(m_target, ec)) {
    fs::rename(m_staging, m_target, ec);
    if (ec) {
      throw Error(m_target.string() + ": cannot move the output into place: " + ec.message());
    }
    m_published = true;
    return;
  }
  // The old manifest goes first: a folder whose manifest.json exists is complete.
  fs::remove(m_target / "manifest.json", ec);
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(m_staging)) {
    if (entry.path().filename() != "manifest.json") {
      files.push_back(entry.path());
    }
  }
  if (fs::exists(m_staging / "manifest.json")) {
    files.push_back(m_staging / "manifest.json");
  }
  for (const auto& file : files) {
    fs::rename(file, m_target / file.filename(), ec);
    if (ec) {
      throw Error((m_target / file.filename()).string() + ": cannot write: " + ec.message());
    }
  }
  fs::remove_all(m_staging, ec);
  m_published = true;
}

} // namespace npucc::compiler
