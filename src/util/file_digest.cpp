#include "util/file_digest.h"

#include "npucc/error.h"
#include "util/input_scan.h"

namespace npucc::util {

Expected<std::string> file_digest(const std::shared_ptr<InputFile>& file, int64_t* started_ns) {
  if (started_ns != nullptr) {
    *started_ns = 0;
  }
  if (file->sha256() && stamp_of(file->fd()) == file->stamp()) {
    return *file->sha256();
  }
  InputScan scan({file}, nullptr, InputScan::On::this_thread);
  auto hashed = scan.try_wait();
  if (!hashed) {
    return hashed.error();
  }
  if (stamp_of(file->fd()) != file->stamp()) {
    return Error(file->path().string() + ": changed while npucc read it",
                 "run again once nothing writes to it");
  }
  if (started_ns != nullptr) {
    *started_ns = scan.started_ns();
  }
  file->set_sha256(hashed->front().sha256);
  return *file->sha256();
}

} // namespace npucc::util
