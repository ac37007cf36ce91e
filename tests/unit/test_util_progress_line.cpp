#include "util/progress_line.h"

#include <doctest/doctest.h>

using namespace npucc::util;

TEST_SUITE("npucc::util::progress_line") {
  TEST_CASE("counted work: bar, count, percentage, item, elapsed and ETA") {
    ProgressFrame frame{"populate", 3, 10, "resnet50.onnx", 4.2, 0};
    // 80 columns: a 19-column bar (79 / 4), 3/10 of it filled.
    CHECK(format_progress_line(frame, 80, Colour::no) ==
          "populate [=====>             ]  3/10 30%  resnet50.onnx  0:04 ETA 0:09");
  }

  TEST_CASE("finished and not started") {
    ProgressFrame done{"verify", 7, 7, "", 65, 0};
    CHECK(format_progress_line(done, 80, Colour::no) ==
          "verify [===================]  7/7 100%  1:05");
    ProgressFrame none{"verify", 0, 7, "", 0, 0};
    CHECK(format_progress_line(none, 80, Colour::no) ==
          "verify [                   ]  0/7 0%  0:00");
  }

  TEST_CASE("bytes: sizes written of the total, percentage and ETA") {
    ProgressFrame frame{
        "compile m.onnx", uint64_t{256} << 20, uint64_t{1} << 30, "writing graphs", 3, 0,
        Measure::bytes};
    CHECK(format_progress_line(frame, 100, Colour::no) ==
          "compile m.onnx [======>                 ]  256.0 MiB/1.0 GiB 25%  writing graphs  0:03 "
          "ETA 0:09");
    frame.done = frame.total;
    CHECK(format_progress_line(frame, 100, Colour::no).find("]  1.0 GiB/1.0 GiB 100%  writing") !=
          std::string::npos);
  }

  TEST_CASE("unknown length: a bouncing marker") {
    ProgressFrame frame{"compile m.onnx", 0, 0, "validated", 2, 0};
    CHECK(format_progress_line(frame, 80, Colour::no) ==
          "compile m.onnx [<=>                ]  validated  0:02");
    frame.tick = 1;
    CHECK(format_progress_line(frame, 80, Colour::no).find("[ <=>") != std::string::npos);
    frame.tick = 16; // the far end (bar 19 wide: positions 0..16), then back
    CHECK(format_progress_line(frame, 80, Colour::no).find("<=>]") != std::string::npos);
    frame.tick = 17;
    CHECK(format_progress_line(frame, 80, Colour::no).find("<=> ]") != std::string::npos);
  }

  TEST_CASE("long items keep their tail and the line never reaches the last column") {
    std::string item(200, 'x');
    item += "model.onnx";
    ProgressFrame frame{"populate", 1, 2, item, 1, 0};
    for (int width : {20, 40, 60, 80, 200}) {
      CAPTURE(width);
      CAPTURE(format_progress_line(frame, width, Colour::no));
      std::string line = format_progress_line(frame, width, Colour::no);
      CHECK(line.size() <= static_cast<size_t>(width - 1));
    }
    CHECK(format_progress_line(frame, 200, Colour::no).find("50%  ...xxx") != std::string::npos);
    CHECK(format_progress_line(frame, 200, Colour::no).find("xxxmodel.onnx  0:01 ETA 0:01") !=
          std::string::npos);
    // Too narrow for a bar: the counts and the clock stay.
    CHECK(format_progress_line(frame, 20, Colour::no) == "populate 1/2 50% 0:");
  }

  TEST_CASE("colour paints only the bar") {
    ProgressFrame frame{"x", 1, 2, "", 0, 0};
    std::string line = format_progress_line(frame, 80, Colour::yes);
    CHECK(line.find("[\033[32m=========>") != std::string::npos);
    CHECK(line.find("\033[0m]  1/2 50%") != std::string::npos);
  }

  TEST_CASE("clock") {
    CHECK(format_clock(0) == "0:00");
    CHECK(format_clock(59.9) == "0:59");
    CHECK(format_clock(725) == "12:05");
    CHECK(format_clock(3723) == "1:02:03");
    CHECK(format_clock(-3) == "0:00");
  }
}
