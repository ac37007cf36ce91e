#include "progress.h"

#include "terminal.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <unistd.h>

namespace npucc::cli {

namespace {

constexpr auto k_redraw_interval = std::chrono::milliseconds(100);
constexpr auto k_tick_interval = std::chrono::milliseconds(250);

std::string clock_text(double seconds) {
  long total = static_cast<long>(seconds);
  char buffer[32];
  if (total >= 3600) {
    std::snprintf(buffer, sizeof buffer, "%ld:%02ld:%02ld", total / 3600, total / 60 % 60,
                  total % 60);
  } else {
    std::snprintf(buffer, sizeof buffer, "%ld:%02ld", total / 60, total % 60);
  }
  return buffer;
}

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

Progress::Progress(const GlobalOptions& global, std::string label)
    : m_label(std::move(label)), m_start(std::chrono::steady_clock::now()) {
  m_shown = !global.quiet && is_terminal(STDERR_FILENO);
  if (m_shown) {
    m_color = use_color(global, STDERR_FILENO);
    std::lock_guard<std::mutex> lock(m_mutex);
    draw_locked(true);
    m_ticker = std::thread([this] { tick_loop(); });
  }
}

Progress::~Progress() {
  finish();
}

std::string Progress::render(std::string_view label, size_t done, size_t total,
                             std::string_view item, double elapsed, int width, bool color,
                             int tick) {
  const size_t columns =
      static_cast<size_t>(std::max(width, 20)) - 1; // never touch the last column
  const size_t bar_width = std::clamp<size_t>(columns / 4, 10, 30);
  std::string bar(bar_width, ' ');
  std::string counts;
  std::string clock = clock_text(elapsed);
  if (total > 0) {
    done = std::min(done, total);
    size_t filled = done * bar_width / total;
    std::fill(bar.begin(), bar.begin() + static_cast<long>(filled), '=');
    if (filled < bar_width && done > 0) {
      bar[filled] = '>';
    }
    counts = std::to_string(done) + "/" + std::to_string(total) + " " +
             std::to_string(done * 100 / total) + "%";
    if (done > 0 && done < total) {
      clock += " ETA " +
               clock_text(elapsed * static_cast<double>(total - done) / static_cast<double>(done));
    }
  } else {
    // Unknown length: a marker bouncing across the bar.
    size_t span = bar_width - 3;
    size_t position = static_cast<size_t>(tick) % (2 * span);
    position = position < span ? position : 2 * span - position;
    bar.replace(position, 3, "<=>");
  }
  std::string head = std::string(label) + " [";
  std::string tail = "]" + (counts.empty() ? "" : "  " + counts);
  size_t fixed = head.size() + bar.size() + tail.size() + 2 + clock.size();
  std::string middle;
  if (fixed + 4 < columns && !item.empty()) {
    middle = "  " + fit(item, columns - fixed - 2);
  }
  std::string line = head + paint(bar, "32", color) + tail + middle + "  " + clock;
  if (fixed + middle.size() > columns) {
    // Too narrow for the whole line: the counts and clock matter more than the bar.
    line = fit(std::string(label) + " " + (counts.empty() ? "" : counts + " ") + clock, columns);
  }
  return line;
}

void Progress::draw_locked(bool force) {
  if (!m_shown || m_finished) {
    return;
  }
  auto now = std::chrono::steady_clock::now();
  if (!force && now - m_last_draw < k_redraw_interval) {
    return;
  }
  m_last_draw = now;
  double elapsed = std::chrono::duration<double>(now - m_start).count();
  std::string frame = render(m_label, m_done, m_total, m_item, elapsed,
                             terminal_width(STDERR_FILENO), m_color, m_tick);
  std::cerr << "\r" << frame << "\033[K" << std::flush;
}

void Progress::clear_locked() {
  if (m_shown && !m_finished) {
    std::cerr << "\r\033[K" << std::flush;
  }
}

void Progress::update(size_t done, size_t total, std::string_view item) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_done = done;
  m_total = total;
  m_item = std::string(item);
  draw_locked(done == total);
}

void Progress::step(std::string_view item) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_item = std::string(item);
  draw_locked(false);
}

void Progress::print(std::string_view line) {
  std::lock_guard<std::mutex> lock(m_mutex);
  clear_locked();
  std::cerr << line << "\n";
  draw_locked(true);
}

void Progress::finish() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    clear_locked();
    m_finished = true;
  }
  m_wake.notify_all();
  if (m_ticker.joinable()) {
    m_ticker.join();
  }
}

LogSink Progress::log_sink(Verbose verbose) {
  return [this, verbose](const std::string& line) {
    if (verbose == Verbose::yes) {
      print("npucc: " + line);
    }
    step(line);
  };
}

void Progress::tick_loop() {
  std::unique_lock<std::mutex> lock(m_mutex);
  while (!m_finished) {
    m_wake.wait_for(lock, k_tick_interval);
    if (!m_finished) {
      ++m_tick;
      draw_locked(true);
    }
  }
}

} // namespace npucc::cli
