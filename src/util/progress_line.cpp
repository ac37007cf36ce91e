#include "util/progress_line.h"

#include "util/strings.h"

#include <algorithm>
#include <cstdio>

namespace npucc::util {

namespace {

// Keeps the end of `text` (file names differ in their tails) within `width` columns.
std::string fit(std::string_view text, size_t width) {
  if (text.size() <= width) {
    return std::string(text);
  }
  if (width <= 3) {
    return std::string(width, '.');
  }
  return "..." + std::string(text.substr(text.size() - (width - 3)));
}

} // namespace

std::string format_clock(double seconds) {
  long total = seconds > 0 ? static_cast<long>(seconds) : 0;
  char buffer[32];
  if (total >= 3600) {
    std::snprintf(buffer, sizeof buffer, "%ld:%02ld:%02ld", total / 3600, total / 60 % 60,
                  total % 60);
  } else {
    std::snprintf(buffer, sizeof buffer, "%ld:%02ld", total / 60, total % 60);
  }
  return buffer;
}

std::string format_progress_line(const ProgressFrame& frame, int width, Colour colour) {
  const size_t columns = static_cast<size_t>(std::max(width, 20)) - 1;
  const size_t bar_width = std::clamp<size_t>(columns / 4, 10, 30);
  std::string bar(bar_width, ' ');
  std::string counts;
  std::string clock = format_clock(frame.elapsed_seconds);
  if (frame.total > 0) {
    size_t done = std::min(frame.done, frame.total);
    size_t filled = done * bar_width / frame.total;
    std::fill(bar.begin(), bar.begin() + static_cast<long>(filled), '=');
    if (filled < bar_width && done > 0) {
      bar[filled] = '>';
    }
    counts = frame.measure == Measure::bytes
                 ? format_bytes(done) + "/" + format_bytes(frame.total)
                 : std::to_string(done) + "/" + std::to_string(frame.total);
    counts += " " + std::to_string(done * 100 / frame.total) + "%";
    if (done > 0 && done < frame.total) {
      clock +=
          " ETA " + format_clock(frame.elapsed_seconds * static_cast<double>(frame.total - done) /
                                 static_cast<double>(done));
    }
  } else {
    size_t span = bar_width - 3;
    size_t position = static_cast<size_t>(std::max(frame.tick, 0)) % (2 * span);
    position = position < span ? position : 2 * span - position;
    bar.replace(position, 3, "<=>");
  }
  std::string head = std::string(frame.label) + " [";
  std::string tail = "]" + (counts.empty() ? "" : "  " + counts);
  size_t fixed = head.size() + bar.size() + tail.size() + 2 + clock.size();
  if (fixed > columns) {
    // Too narrow for a bar: the counts and the clock matter more.
    std::string short_line =
        std::string(frame.label) + " " + (counts.empty() ? "" : counts + " ") + clock;
    return short_line.substr(0, columns);
  }
  std::string middle;
  if (fixed + 4 < columns && !frame.item.empty()) {
    middle = "  " + fit(frame.item, columns - fixed - 2);
  }
  std::string painted = colour == Colour::yes ? "\033[32m" + bar + "\033[0m" : bar;
  return head + painted + tail + middle + "  " + clock;
}

} // namespace npucc::util
