#pragma once

#include "util/expected.h"
#include "util/input_file.h"

#include <cstdint>
#include <memory>
#include <string>

namespace npucc::util {

// The SHA-256 of an open input file, taken once: the one a reader set on the file
// (InputFile::sha256) while the file is as it was opened, else the whole file read now on
// this thread (InputScan) and kept on the file for the readers after. `started_ns`, when
// given, receives the clock before the first byte was read (0 when nothing was read): the
// digest cache's racy rule needs it. An error when the read fails or the file changed while
// it was read (the digest may then stand for no version of it). The model reader and the
// key (key/input_digest.h) both take a file's digest through this.
Expected<std::string> file_digest(const std::shared_ptr<InputFile>& file,
                                  int64_t* started_ns = nullptr);

} // namespace npucc::util
