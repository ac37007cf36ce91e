#include "key/input_digest.h"

#include "util/input_scan.h"

namespace npucc::key {

util::Expected<std::string> digest_of_input(const std::shared_ptr<util::InputFile>& file,
                                            cache::InputDigests* digests) {
  if (file->sha256()) {
    return *file->sha256();
  }
  cache::InputDigest found =
      digests != nullptr ? digests->use_recorded(file->fd()) : cache::InputDigest{};
  if (!found.from_stamp) {
    util::InputScan scan({file}, nullptr, util::InputScan::On::this_thread);
    auto hashed = scan.try_wait();
    if (!hashed) {
      return hashed.error();
    }
    found.sha256 = hashed->front().sha256;
    // A write while it was hashed: the digest may stand for no version of the file.
    if (util::stamp_of(file->fd()) != file->stamp()) {
      return Error(file->path().string() + ": changed while npucc read it for the cache key",
                   "compile again once nothing writes to it");
    }
    if (digests != nullptr) {
      digests->record(file->fd(), file->stamp(), scan.started_ns(), found.sha256, found.why_hashed);
    }
  }
  file->set_sha256(found.sha256);
  return found.sha256;
}

} // namespace npucc::key
