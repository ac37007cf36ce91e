#pragma once

#include <string>
#include <string_view>
#include <vector>

// A socket between npucc and a worker process it forked: `cache populate`'s compile
// workers (pipeline/populate_workers.h) and the ONNX worker (check/isolated_worker.h).
namespace npucc::util {

// Writes all of `data`; false when the peer is gone (no SIGPIPE: MSG_NOSIGNAL).
bool send_all(int fd, std::string_view data);
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
// Receives one message of `count` fields (the whole of what the peer sent, as
// request-reply channels have it); false when the peer is gone first. Throws npucc::Error
// on a malformed message.
bool receive_message(int fd, size_t count, std::vector<std::string>& fields);
// The same without copying the fields out: `fields` view `buffer`, which holds the message.
bool receive_message(int fd, size_t count, std::string& buffer,
                     std::vector<std::string_view>& fields);
// Sends a message of `fields` as encode_fields would write it, without assembling it first
// (a request that carries a graph of hundreds of MB is not copied).
bool send_fields(int fd, const std::vector<std::string_view>& fields);
// Appends one field to `out`, as encode_fields writes it.
void append_field(std::string& out, std::string_view field);
// Reads the field at `at` of a complete message (moving `at` past it); false when none is
// there whole. Throws npucc::Error on a malformed header.
bool next_field(std::string_view buffer, size_t& at, std::string_view& field);

} // namespace npucc::util
