#pragma once

// The text of one progress frame (the CLI draws it on stderr; see cli/progress.h):
//
//   populate [=========>          ]  3/10  30%  resnet50.onnx  0:04 ETA 0:09
//   compile  [    <=>             ]  pass eliminate_identity changed 3 nodes  0:02
//   compile  [=====>              ]  256.0 MiB/1.0 GiB 25%  writing graphs  0:03 ETA 0:09
//
// Pure formatting, so it is unit-tested without a terminal.

#include <cstddef>
#include <string>
#include <string_view>

namespace npucc::util {

enum class Colour { no, yes };
// What done and total count: items (3/10) or bytes (256.0 MiB/1.0 GiB).
enum class Measure { count, bytes };

struct ProgressFrame {
  std::string_view label;
  size_t done = 0;
  size_t total = 0; // 0: unknown length, a marker bounces instead of a bar filling
  std::string_view item;
  double elapsed_seconds = 0;
  int tick = 0; // position of the bouncing marker
  Measure measure = Measure::count;
};

// Fits in `width` columns (less one, so the cursor never wraps); with Colour::yes the bar
// is green.
std::string format_progress_line(const ProgressFrame& frame, int width, Colour colour);

// "0:07", "12:05", "1:02:03".
std::string format_clock(double seconds);

} // namespace npucc::util
