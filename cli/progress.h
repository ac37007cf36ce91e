#pragma once

// A one-line progress display on stderr (util/progress_line.h draws the frame), fed by
// the library's callbacks.
// Shown only when stderr is a terminal and --quiet is off, so pipes and CI logs stay
// clean; coloured per use_color(). Redraws at most 10 times a second, and a ticker keeps
// the clock moving during one long step. The line is erased by finish() or the
// destructor, so an error printed after it starts on a clean line.

#include "app.h"
#include "npucc/compile.h"
#include "util/progress_line.h"

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace npucc::cli {

enum class Verbose { no, yes };

class Progress {
public:
  Progress(const GlobalOptions& global, std::string label);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Whether anything is drawn (stderr is a terminal, no --quiet).
  bool shown() const { return m_shown; }

  // Counted work: `done` of `total` finished, now on `item`.
  void update(size_t done, size_t total, std::string_view item);
  // Bytes: `done` of about `total` written, on `item`. The next step() ends it.
  void update_bytes(uint64_t done, uint64_t total, std::string_view item);
  // Work of unknown length: the step now running.
  void step(std::string_view item);
  // A line (warning, --verbose output) printed above the bar.
  void print(std::string_view line);
  // Erases the bar for good; later calls draw nothing.
  void finish();

  // A LogSink for npucc::compile: each line becomes the current step; with Verbose::yes it
  // is also printed ("npucc: LINE"), above the bar or plainly when there is none.
  LogSink log_sink(Verbose verbose);
  // A WriteProgress for npucc::compile: the graphs' write in bytes (a large model's weights
  // take seconds).
  WriteProgress write_progress();

private:
  void draw_locked(bool force);
  void clear_locked();
  void tick_loop();

  std::string m_label;
  bool m_shown = false;
  bool m_color = false;
  bool m_finished = false;
  size_t m_done = 0;
  size_t m_total = 0;
  util::Measure m_measure = util::Measure::count;
  std::string m_item;
  int m_tick = 0;
  std::chrono::steady_clock::time_point m_start;
  std::chrono::steady_clock::time_point m_last_draw;
  std::mutex m_mutex;
  std::condition_variable m_wake;
  std::thread m_ticker;
};

} // namespace npucc::cli
