#pragma once

#include <filesystem>
#include <string>

// A folder of this process's own in the temporary folder ($TMPDIR, else /tmp), for the files
// npucc hands to its runtime child (output/runtime_graph_file.h: graphs with their weights
// inline; runtime/runtime_process.cpp: input sets). What they hold is the user's model, so
// no other local user may read them: the folder is made by mkdtemp(), mode 0700 whatever the
// umask, and the files in it are written 0600 all the same (k_file_mode). Its name,
// "STEM.tmp.PID.XXXXXX", is the interrupt handler's to sweep (util/interrupt.h); otherwise
// it is removed with everything in it when this ends, on a return or an exception alike.
namespace npucc::util {

class PrivateTempFolder {
public:
  // Throws npucc::Error naming the temporary folder when the folder cannot be made.
  explicit PrivateTempFolder(const std::string& stem);
  ~PrivateTempFolder();
  PrivateTempFolder(const PrivateTempFolder&) = delete;
  PrivateTempFolder& operator=(const PrivateTempFolder&) = delete;

  const std::filesystem::path& path() const { return m_path; }

  // The mode of every file written in such a folder (util::FileMode::exactly).
  static constexpr unsigned k_file_mode = 0600;

private:
  std::filesystem::path m_path;
};

} // namespace npucc::util
