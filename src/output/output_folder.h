#pragma once

#include "npucc/compile.h"

#include <filesystem>
#include <set>
#include <string>

namespace npucc::output {

// Everything a compile writes goes to a staging folder beside the output folder;
// publish() moves it into place. The output folder is one compile's: publish() first
// removes the old manifest.json, then the files it listed that this compile does not
// write (only names npucc writes: a manifest delivered from a forged cache entry cannot
// make it remove anything else) (an earlier compile's low.onnx, emulation.onnx, external data), renames the new
// files in and the new manifest.json last. So a folder with a manifest.json holds exactly
// one compile's files (and whatever files npucc never wrote, which it leaves alone); a
// reader that finds no manifest is looking at a compile being published.
//
// A file in the way that no earlier manifest lists (someone's own high.onnx) is refused
// unless OutputReplace::any (--force); so is a model that would itself be overwritten or
// removed ("input file is also an output"). Destroyed unpublished, the staging folder is
// removed: an error leaves no partial output. publish() holds Ctrl-C and SIGTERM until it
// is done (util::DeferInterrupts), so an interrupted compile leaves the earlier compile
// or the new one, and the handler sweeps the staging folder of one that had not begun.
class OutputFolder {
public:
  explicit OutputFolder(const CompileOptions& options);
  ~OutputFolder();
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;

  const std::filesystem::path& staging() const { return m_staging; }
  const std::filesystem::path& target() const { return m_target; }
  void publish();

private:
  void replace_earlier_compile();

  std::filesystem::path m_target;
  std::filesystem::path m_staging;
  bool m_published = false;
};

// The files an earlier npucc compile wrote into `dir`, as its manifest.json lists them
// (manifest.json included); empty when there is no readable npucc manifest.
std::set<std::string> files_of_earlier_compile(const std::filesystem::path& dir);

// Throws what OutputFolder(options) would (no -o, a file in the way, a folder that cannot
// be created, an input that is an output), leaving nothing behind: checks an output folder
// before any real work.
void check_output_folder(const CompileOptions& options);

} // namespace npucc::output
