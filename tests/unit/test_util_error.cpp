#include "npucc/error.h"

#include <doctest/doctest.h>

TEST_SUITE("npucc::error_line") {
  TEST_CASE("message and hint on one line, control characters escaped") {
    CHECK(npucc::error_line("model.onnx: no graph") == "model.onnx: no graph");
    CHECK(npucc::error_line("bad", "fix it") == "bad (fix it)");
    CHECK(npucc::error_line("node \"a\nb\"", "\x1b[31m") == "node \"a\\x0ab\" (\\x1b[31m)");
    npucc::Error error = npucc::usage_error("--step x: not a number", "give an integer");
    CHECK(error.line() == "--step x: not a number (give an integer)");
    CHECK(error.status() == npucc::ExitStatus::usage);
  }
}
