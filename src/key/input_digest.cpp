#include "key/input_digest.h"

#include "util/file_digest.h"

namespace npucc::key {

util::Expected<std::string> digest_of_input(const std::shared_ptr<util::InputFile>& file,
                                            cache::InputDigests* digests) {
  if (file->sha256()) {
    return *file->sha256();
  }
  cache::InputDigest found =
      digests != nullptr ? digests->use_recorded(file->fd()) : cache::InputDigest{};
  if (found.from_stamp) {
    file->set_sha256(found.sha256);
    return found.sha256;
  }
  int64_t started_ns = 0;
  util::Expected<std::string> sha256 = util::file_digest(file, &started_ns);
  if (sha256 && digests != nullptr) {
    digests->record(file->fd(), file->stamp(), started_ns, *sha256, found.why_hashed);
  }
  return sha256;
}

} // namespace npucc::key
