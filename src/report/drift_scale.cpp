#include "report/drift_scale.h"

#include <algorithm>
#include <cmath>

namespace npucc::report {

namespace {
// 1 - 0.9999 is 1.0000000000000286e-4: a hair past a decade is that decade.
constexpr double k_decade_hair = 1e-9;
} // namespace

LogScale LogScale::fit(const std::vector<std::optional<double>>& errors, std::optional<double> also) {
  double smallest = HUGE_VAL;
  double largest = 0;
  bool zeros = false;
  auto take = [&](double error) {
    if (error > 0) {
      smallest = std::min(smallest, error);
      largest = std::max(largest, error);
    } else {
      zeros = true;
    }
  };
  for (const auto& error : errors) {
    if (error) {
      take(*error);
    }
  }
  LogScale scale;
  if (also && *also > 0) { // a decade either side, so the line is never on the frame
    take(*also / 10);
    take(*also * 10);
  }
  if (largest > 0) {
    scale.m_data_low = static_cast<int>(std::floor(std::log10(smallest) + k_decade_hair));
    scale.m_high = static_cast<int>(std::ceil(std::log10(largest) - k_decade_hair));
    if (scale.m_high <= scale.m_data_low) {
      scale.m_high = scale.m_data_low + 1;
    }
    if (scale.m_high - scale.m_data_low > k_max_decades) {
      scale.m_data_low = scale.m_high - k_max_decades;
      scale.m_floor = true;
      scale.m_floor_only_zeros = false;
    }
  }
  scale.m_floor = scale.m_floor || zeros;
  return scale;
}

double LogScale::fraction(double error) const {
  const double span = m_high - axis_low();
  if (!(error > 0) || std::log10(error) + k_decade_hair < m_data_low) {
    return 0; // the floor line (the lowest decade when nothing needs a floor)
  }
  return std::min(1.0, (std::log10(error) - axis_low()) / span);
}

std::vector<int> LogScale::tick_decades() const {
  std::vector<int> ticks;
  if (m_floor) {
    ticks.push_back(axis_low());
  }
  const int step = std::max(1, (m_high - m_data_low + 7) / 8);
  std::vector<int> decades;
  for (int decade = m_high; decade >= m_data_low; decade -= step) {
    decades.push_back(decade);
  }
  ticks.insert(ticks.end(), decades.rbegin(), decades.rend());
  return ticks;
}

std::string LogScale::floor_label() const {
  return m_floor_only_zeros ? "0" : "<" + decade_label(m_data_low);
}

std::string decade_label(int decade) {
  if (decade >= 0 && decade <= 3) {
    return std::to_string(static_cast<int>(std::lround(std::pow(10.0, decade))));
  }
  return "1e" + std::to_string(decade);
}

std::vector<size_t> order_ticks(size_t count, size_t most) {
  std::vector<size_t> ticks;
  if (count == 0) {
    return ticks;
  }
  size_t step = 1;
  for (size_t power = 1;; power *= 10) {
    const size_t candidates[] = {power, 2 * power, 5 * power};
    auto fits = std::find_if(std::begin(candidates), std::end(candidates),
                             [&](size_t s) { return (count - 1) / s + 1 <= most; });
    if (fits != std::end(candidates)) {
      step = *fits;
      break;
    }
  }
  for (size_t at = 0; at < count; at += step) {
    ticks.push_back(at);
  }
  return ticks;
}

} // namespace npucc::report
