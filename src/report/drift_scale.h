#pragma once

#include <optional>
#include <string>
#include <vector>

// The axes of the drift picture: a log scale in whole decades for errors, and the ticks of
// the node-order axis.
namespace npucc::report {

// Decades `low` to `high` (10^low at the bottom). A log scale has no zero: an error of 0,
// or one below the `data_low` decade (the span is capped at k_max_decades), is drawn on a
// floor line one decade below the data, which the axis labels "0" (or "<1eN").
class LogScale {
public:
  static constexpr int k_max_decades = 16;
  // `errors`: the series' figures (nullopt: undefined, not drawn); `also`: figures the axis
  // must show too (the threshold).
  static LogScale fit(const std::vector<std::optional<double>>& errors, std::optional<double> also);

  bool has_floor() const { return m_floor; }
  int data_low() const { return m_data_low; }
  int axis_low() const { return m_floor ? m_data_low - 1 : m_data_low; }
  int high() const { return m_high; }
  // Whether what sits on the floor line is all exact zeros (the floor's label "0").
  bool floor_is_zero() const { return m_floor_only_zeros; }
  // 0 at the bottom, 1 at the top.
  double fraction(double error) const;
  // The decades that get a tick, the floor (when there is one) first.
  std::vector<int> tick_decades() const;
  std::string floor_label() const;

private:
  int m_data_low = -8;
  int m_high = 0;
  bool m_floor = false;
  bool m_floor_only_zeros = true;
};

// "1e-4", "1", "10", "1e+05": a decade's tick label.
std::string decade_label(int decade);

// Ticks of an axis of `count` places (0 .. count-1): every 1, 2 or 5 x 10^k, at most
// `most` of them.
std::vector<size_t> order_ticks(size_t count, size_t most = 12);

} // namespace npucc::report
