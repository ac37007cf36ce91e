#pragma once

#include <string>

// Once a remote cache fails, this process stops asking it: a down or slow server costs
// one timeout per run, not one per model (populate compiles many). Thread-safe.
namespace npucc::cache::remote {

bool remote_is_down(const std::string& url);
// True for the call that opened the breaker (the one that should warn).
bool mark_remote_down(const std::string& url);

} // namespace npucc::cache::remote
