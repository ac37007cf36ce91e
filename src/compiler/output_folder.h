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

// Throws what OutputFolder(target) would (no -o, a file in the way, a folder that cannot
// be created), leaving nothing behind: checks an output folder before any real work.
void check_output_folder(const std::filesystem::path& target);

} // namespace npucc::compiler
