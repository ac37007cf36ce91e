#include "progress.h"

#include "terminal.h"
#include "util/strings.h"

#include <iostream>
#include <unistd.h>

namespace npucc::cli {

namespace {

constexpr auto k_redraw_interval = std::chrono::milliseconds(100);
constexpr auto k_tick_interval = std::chrono::milliseconds(250);

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
  util::ProgressFrame frame{m_label, m_done, m_total, m_item, elapsed, m_tick, m_measure};
  std::string line = util::format_progress_line(frame, terminal_width(STDERR_FILENO),
                                                m_color ? util::Colour::yes : util::Colour::no);
  std::cerr << "\r" << line << "\033[K" << std::flush;
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
  m_item = util::printable(item);
  draw_locked(done == total);
}

void Progress::update_bytes(uint64_t done, uint64_t total, std::string_view item) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_measure = util::Measure::bytes;
  m_done = done;
  m_total = total;
  m_item = util::printable(item);
  draw_locked(done == total);
}

void Progress::step(std::string_view item) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_measure == util::Measure::bytes) { // the write is over: back to a step of its own
    m_measure = util::Measure::count;
    m_done = 0;
    m_total = 0;
  }
  m_item = util::printable(item);
  draw_locked(false);
}

void Progress::print(std::string_view line) {
  std::lock_guard<std::mutex> lock(m_mutex);
  clear_locked();
  std::cerr << util::printable(line) << "\n"; // node and file names from the model
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

WriteProgress Progress::write_progress() {
  if (!m_shown) {
    return {}; // nothing to draw: the library need not wake to report
  }
  return
      [this](uint64_t written, uint64_t total) { update_bytes(written, total, "writing graphs"); };
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
