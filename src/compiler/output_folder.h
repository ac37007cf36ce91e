#pragma once

#include <filesystem>

namespace npucc::compiler {

// Everything a compile writes goes to a staging folder beside the output folder;
// publish() moves it into place (manifest.json last, so a folder with a manifest is
// complete). Destroyed unpublished, the staging folder is removed: an error leaves
// no partial output.
class OutputFolder {
public:
  explicit OutputFolder(std::filesystem::path target);
  ~OutputFolder();
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;

  const std::filesystem::path& staging() const { return m_staging; }
  const std::filesystem::path& target() const { return m_target; }
  void publish();

private:
  std::filesystem::path m_target;
  std::filesystem::path m_staging;
  bool m_published = false;
};

} // namespace npucc::compiler
