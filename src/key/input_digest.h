#pragma once

#include "cache/input_digests.h"
#include "util/expected.h"
#include "util/input_file.h"

#include <string>

namespace npucc::key {

// The SHA-256 of an open input file (a model, its external data), known once: the file's own
// when a reader set it (InputFile::sha256), else the digest cache's record when its stamp
// matches and may be trusted (cache/input_digests.h), else read once (util::InputScan) and
// recorded there. The file keeps it for the readers after. `digests` may be null: then the
// file is hashed. An error when a read fails or the file changed while it was hashed, which
// a lookup takes as a miss and a compile as the end.
util::Expected<std::string> digest_of_input(const std::shared_ptr<util::InputFile>& file,
                                            cache::InputDigests* digests);

} // namespace npucc::key
