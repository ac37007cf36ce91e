#include "util/private_temp_folder.h"

#include "npucc/error.h"
#include "util/file_io.h"
#include "util/interrupt.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <unistd.h>

namespace npucc::util {

PrivateTempFolder::PrivateTempFolder(const std::string& stem) {
  const fs::path folder = temporary_folder();
  sweep_on_interrupt(folder, stem); // before the folder exists: the name holds ".PID."
  std::string name = (folder / stem).string() + ".tmp." + std::to_string(::getpid()) + ".XXXXXX";
  // A signal waits until the folder is made and named here: the handler's sweep, which
  // then finds it, can never run between its creation and its owner knowing of it.
  DeferInterrupts making;
  if (::mkdtemp(name.data()) == nullptr) {
    throw Error(folder.string() + ": cannot create a private folder for ONNX Runtime's files: " +
                    std::strerror(errno),
                "set TMPDIR to a folder you can write");
  }
  m_path = name;
}

PrivateTempFolder::~PrivateTempFolder() {
  // Never follows a link: only the folder's own entries go. A failure is not reported:
  // this runs on the way out of errors too, and the folder is private either way.
  std::error_code ignored;
  fs::remove_all(m_path, ignored);
}

} // namespace npucc::util
