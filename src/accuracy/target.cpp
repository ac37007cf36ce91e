#include "accuracy/target.h"

#include "accuracy/task_metrics.h"
#include "npucc/error.h"
#include "util/strings.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <tuple>

namespace npucc::accuracy {

namespace {

const char* const k_form =
    "give [OUTPUT:]METRIC>=VALUE or [OUTPUT:]METRIC<=VALUE, comma-joined: cosine>=X, top1>=S, "
    "iou@T>=S, psnr>=DB, snr_db>=DB, close[atol=A,rtol=R]>=S, nonfinite<=N, max_abs_error<=X "
    "or max_rel_error<=X (and, from Python, check[LABEL]>=1, score[LABEL]>=X, "
    "score[LABEL]<=X)";

double parse_value(const std::string& clause, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno != 0 || !std::isfinite(value)) {
    throw usage_error("--accuracy-target: \"" + clause + "\": \"" + text + "\" is not a number",
                      k_form);
  }
  return value;
}

[[noreturn]] void refuse_clause(const std::string& clause, const std::string& why) {
  throw usage_error("--accuracy-target: \"" + clause + "\": " + why, k_form);
}

// "close[atol=A,rtol=R]" (either part may be left out: 0) -> its canonical name.
std::string close_metric(const std::string& clause, const std::string& metric) {
  if (metric.back() != ']') {
    refuse_clause(clause, "close takes [atol=A,rtol=R]");
  }
  double tolerance[2] = {0, 0};
  const std::string inside = metric.substr(6, metric.size() - 7);
  size_t start = 0;
  while (start < inside.size()) {
    const auto comma = std::min(inside.find(',', start), inside.size());
    const std::string part(util::trim(inside.substr(start, comma - start)));
    const auto equals = part.find('=');
    const std::string key(util::trim(part.substr(0, equals)));
    if (equals == std::string::npos || (key != "atol" && key != "rtol")) {
      refuse_clause(clause, "close takes [atol=A,rtol=R]");
    }
    const double value = parse_value(clause, std::string(util::trim(part.substr(equals + 1))));
    if (value < 0) {
      refuse_clause(clause, key + " takes a value of 0 or more");
    }
    tolerance[key == "atol" ? 0 : 1] = value;
    start = comma + 1;
  }
  return close_name(tolerance[0], tolerance[1]);
}

// The metric's canonical name, after checking the bound's direction and range.
std::string checked_metric(const std::string& clause, const std::string& metric, bool at_least,
                           double value) {
  auto need = [&](bool ok, const std::string& why) {
    if (!ok) {
      refuse_clause(clause, why);
    }
  };
  if (metric == "cosine") {
    need(at_least && value >= -1 && value <= 1, "cosine takes >= and a value from -1 to 1");
  } else if (metric == "nonfinite") {
    need(!at_least && value >= 0 && value == std::floor(value),
         "nonfinite takes <= and a count (0 or more)");
  } else if (metric == "max_abs_error" || metric == "max_rel_error") {
    need(!at_least && value >= 0, metric + " takes <= and a value of 0 or more");
  } else if (metric == "psnr" || metric == "snr_db") {
    need(at_least, metric + " takes >= and a value in dB");
  } else if (is_function_metric(metric)) {
    const std::string label = function_label(metric);
    need(metric.back() == ']' && !label.empty() &&
             label.find_first_of("[],=<> \t\n") == std::string::npos,
         "a function's clause is check[LABEL] or score[LABEL], LABEL without spaces, "
         "commas, brackets, '=', '<' or '>'");
    need(metric[0] == 's' || (at_least && value == 1), "check[LABEL] takes >=1");
  } else if (metric == "top1" || metric.rfind("iou@", 0) == 0 || metric.rfind("close[", 0) == 0) {
    need(at_least && value >= 0 && value <= 1, "top1, iou@T and close[...] take >= and a share "
                                               "from 0 to 1");
    if (metric.rfind("iou@", 0) == 0) {
      return iou_name(parse_value(clause, metric.substr(4)));
    }
    return metric == "top1" ? metric : close_metric(clause, metric);
  } else {
    refuse_clause(clause, "unknown metric \"" + metric + "\"");
  }
  return metric;
}

TargetClause parse_clause(const std::string& clause) {
  const auto at = clause.find_first_of("<>");
  if (at == std::string::npos || at + 1 >= clause.size() || clause[at + 1] != '=') {
    throw usage_error("--accuracy-target: \"" + clause +
                          "\" is not [OUTPUT:]METRIC>=VALUE or [OUTPUT:]METRIC<=VALUE", k_form);
  }
  std::string left(util::trim(clause.substr(0, at)));
  TargetClause out;
  // OUTPUT:METRIC; output names may hold ':' themselves ("logits:0"), metrics never do.
  const auto colon = left.rfind(':', left.find('['));
  if (colon != std::string::npos) {
    out.output = std::string(util::trim(left.substr(0, colon)));
    left = std::string(util::trim(left.substr(colon + 1)));
    if (out.output.empty()) {
      refuse_clause(clause, "no output name before ':'");
    }
  }
  out.at_least = clause[at] == '>';
  out.value = parse_value(clause, std::string(util::trim(clause.substr(at + 2))));
  out.metric = checked_metric(clause, left, out.at_least, out.value);
  if (is_function_metric(out.metric) && !out.output.empty()) {
    refuse_clause(clause, "a function sees every output: no OUTPUT: before it");
  }
  return out;
}

int metric_rank(const std::string& metric) {
  const char* const order[] = {"cosine", "nonfinite", "max_abs_error", "max_rel_error",
                               "top1",   "iou@",      "psnr",          "snr_db"};
  for (int rank = 0; rank < 8; ++rank) {
    if (metric.rfind(order[rank], 0) == 0) {
      return rank;
    }
  }
  return is_function_metric(metric) ? 9 : 8; // close[...], then functions
}

// Clause texts, split at the commas outside close[...].
std::vector<std::string> split_clauses(const std::string& joined) {
  std::vector<std::string> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= joined.size(); ++i) {
    if (i == joined.size() || (joined[i] == ',' && depth == 0)) {
      out.emplace_back(util::trim(joined.substr(start, i - start)));
      if (out.back().empty()) {
        throw usage_error("--accuracy-target: empty clause in \"" + joined + "\"", k_form);
      }
      start = i + 1;
    } else {
      depth += joined[i] == '[' ? 1 : joined[i] == ']' ? -1 : 0;
    }
  }
  return out;
}

} // namespace

bool is_function_metric(const std::string& metric) {
  return metric.rfind("check[", 0) == 0 || metric.rfind("score[", 0) == 0;
}

std::string function_label(const std::string& metric) {
  return metric.size() < 7 ? std::string() : metric.substr(6, metric.size() - 7);
}

AccuracyTarget parse_accuracy_target(const std::vector<std::string>& clauses) {
  AccuracyTarget target;
  for (const auto& joined : clauses) {
    for (const auto& text : split_clauses(joined)) {
      TargetClause clause = parse_clause(text);
      auto same = std::find_if(target.clauses.begin(), target.clauses.end(), [&](auto& c) {
        return c.output == clause.output && c.metric == clause.metric;
      });
      if (same != target.clauses.end()) {
        *same = clause; // a metric given again keeps the last
      } else {
        target.clauses.push_back(clause);
      }
    }
  }
  std::sort(target.clauses.begin(), target.clauses.end(), [](auto& a, auto& b) {
    return std::make_tuple(a.output, metric_rank(a.metric), a.metric) <
           std::make_tuple(b.output, metric_rank(b.metric), b.metric);
  });
  return target;
}

std::string target_text(const AccuracyTarget& target) {
  std::string out;
  for (const auto& clause : target.clauses) {
    out += (out.empty() ? "" : ",") + (clause.output.empty() ? "" : clause.output + ":") +
           clause.metric + (clause.at_least ? ">=" : "<=") +
           (clause.metric == "nonfinite" ? std::to_string(static_cast<int64_t>(clause.value))
                                         : shortest_number(clause.value));
  }
  return out;
}

FigureRequests figure_requests(const AccuracyTarget& target) {
  FigureRequests out;
  for (const auto& clause : target.clauses) {
    if (clause.metric.rfind("iou@", 0) == 0) {
      out.iou_thresholds.push_back(std::strtod(clause.metric.c_str() + 4, nullptr));
    } else if (clause.metric.rfind("close[", 0) == 0) {
      const auto rtol = clause.metric.find(",rtol=");
      out.tolerances.emplace_back(std::strtod(clause.metric.c_str() + 11, nullptr),
                                  std::strtod(clause.metric.c_str() + rtol + 6, nullptr));
    }
  }
  return out;
}

} // namespace npucc::accuracy
