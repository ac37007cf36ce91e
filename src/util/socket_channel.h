#pragma once

#include <string>
#include <vector>

// A socket between npucc and a worker process it forked: `cache populate`'s compile
// workers (pipeline/populate_workers.h) and the ONNX worker (check/isolated_worker.h).
namespace npucc::util {

// Writes all of `data`; false when the peer is gone (no SIGPIPE: MSG_NOSIGNAL).
bool send_all(int fd, const std::string& data);
// Appends what is there to `buffer`; false at the end of the stream or on an error.
bool receive_some(int fd, std::string& buffer);

// How a worker ended, as a phrase: "was killed by signal 9 (Killed)", "exited with status 3".
std::string describe_wait_status(int status);

// The wire format (exposed for tests): a message is a list of fields, each written as
// "<decimal length>:<bytes>", so any bytes survive (paths need not be UTF-8).
std::string encode_fields(const std::vector<std::string>& fields);
// Takes one message of `count` fields off the front of `buffer`; false while it is
// incomplete. Throws npucc::Error on a malformed buffer.
bool decode_fields(std::string& buffer, size_t count, std::vector<std::string>& fields);

} // namespace npucc::util
