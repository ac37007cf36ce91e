#include "accuracy/drift_fold.h"

#include "accuracy/body_probe.h"
#include "npucc/error.h"
#include "runtime/runtime.h"
#include "util/parallel.h"
#include "util/socket_channel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

namespace npucc::accuracy {

namespace {

// Numbers cross as their 8 bytes: both ends are the same npucc (the runtime process is its
// fork), and NaN and infinity survive.
template <typename T> void append_number(std::string& out, T value) {
  static_assert(sizeof(T) == 8);
  char bytes[8];
  std::memcpy(bytes, &value, 8);
  util::append_field(out, std::string_view(bytes, 8));
}

class FieldReader {
public:
  explicit FieldReader(std::string_view bytes) : m_bytes(bytes) {}
  std::string_view next() {
    std::string_view field;
    if (!util::next_field(m_bytes, m_at, field)) {
      throw Error("runtime: a drift report's figures did not arrive intact");
    }
    return field;
  }
  template <typename T> T number() {
    const auto field = next();
    if (field.size() != 8) {
      throw Error("runtime: a drift report's figures did not arrive intact");
    }
    T value;
    std::memcpy(&value, field.data(), 8);
    return value;
  }
  bool done() const { return m_at == m_bytes.size(); }

private:
  std::string_view m_bytes;
  size_t m_at = 0;
};

bool is_body_value(std::string_view name) {
  return name.rfind(k_body_probe_prefix, 0) == 0;
}

// The fold inside the runtime process: graph a is the high (reference) one.
class DriftFold : public runtime::PairFold {
public:
  DriftFold(std::string high_what, std::string low_what)
      : m_high_what(std::move(high_what)), m_low_what(std::move(low_what)) {}

  void fold(const std::vector<runtime::TensorView>& high,
            const std::vector<runtime::TensorView>& low) override {
    const auto start = std::chrono::steady_clock::now();
    m_result.figures.resize(high.size());
    std::vector<char> compared(high.size(), 1);
    for (size_t v = 0; v < high.size(); ++v) { // named here: fold_drift knows no roles
      if (v < low.size() && is_body_value(high[v].name)) { // a branch not taken, or in one run
        compared[v] = body_set_comparable(m_result.figures[v], high[v], low[v]);
      } else if (v >= low.size() || high[v].shape != low[v].shape) {
        throw Error("value '" + std::string(high[v].name) + "' is " +
                        runtime::describe(high[v].type, high[v].shape) + " in " + m_high_what +
                        " and " +
                        (v < low.size() ? runtime::describe(low[v].type, low[v].shape)
                                        : std::string("missing")) +
                        " in " + m_low_what,
                    "a drift report compares values of the same shape under the same name");
      }
    }
    util::parallel_for(high.size(), [&](size_t v) {
      if (compared[v] != 0) {
        fold_drift(m_result.figures[v], high[v], low[v]);
      }
    });
    m_result.fold_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  std::string result() override { return encode_drift_fold(m_result); }

private:
  std::string m_high_what, m_low_what;
  DriftFoldResult m_result;
};

std::unique_ptr<runtime::PairFold> make_drift_fold(const std::string& high_what,
                                                   const std::string& low_what) {
  return std::make_unique<DriftFold>(high_what, low_what);
}

// Before main(): the runtime processes are forked later, and find it registered.
[[maybe_unused]] const bool k_drift_fold_registered = runtime::register_pair_fold(k_drift_fold, make_drift_fold);

} // namespace

std::string encode_drift_fold(const DriftFoldResult& result) {
  std::string out;
  append_number(out, result.fold_seconds);
  append_number(out, static_cast<int64_t>(result.figures.size()));
  for (const auto& f : result.figures) {
    append_number(out, f.elements);
    append_number(out, f.total);
    append_number(out, f.cosine);
    util::append_field(out, f.cosine_undefined);
    append_number(out, f.max_abs_error);
    append_number(out, f.flushed);
    append_number(out, f.overflowed);
    append_number(out, f.high_max_abs);
    append_number(out, f.high_min_nonzero_abs);
    append_number(out, f.sets);
    append_number(out, f.sets_empty);
    append_number(out, f.sets_differing);
  }
  return out;
}

DriftFoldResult decode_drift_fold(std::string_view bytes) {
  FieldReader read(bytes);
  DriftFoldResult result;
  result.fold_seconds = read.number<double>();
  const auto count = read.number<int64_t>();
  if (count < 0 || static_cast<uint64_t>(count) > bytes.size()) {
    throw Error("runtime: a drift report's figures did not arrive intact");
  }
  result.figures.resize(static_cast<size_t>(count));
  for (auto& f : result.figures) {
    f.elements = read.number<int64_t>();
    f.total = read.number<int64_t>();
    f.cosine = read.number<double>();
    f.cosine_undefined = std::string(read.next());
    f.max_abs_error = read.number<double>();
    f.flushed = read.number<int64_t>();
    f.overflowed = read.number<int64_t>();
    f.high_max_abs = read.number<double>();
    f.high_min_nonzero_abs = read.number<double>();
    f.sets = read.number<int64_t>();
    f.sets_empty = read.number<int64_t>();
    f.sets_differing = read.number<int64_t>();
  }
  if (!read.done()) {
    throw Error("runtime: a drift report's figures did not arrive intact");
  }
  return result;
}

void merge_drift(DriftFigures& into, const DriftFigures& later) {
  into.elements = std::max(into.elements, later.elements);
  into.total += later.total;
  if (!std::isnan(later.cosine)) {
    into.cosine = std::isnan(into.cosine) ? later.cosine : std::min(into.cosine, later.cosine);
  }
  if (into.cosine_undefined.empty()) {
    into.cosine_undefined = later.cosine_undefined;
  }
  into.max_abs_error = std::max(into.max_abs_error, later.max_abs_error);
  into.flushed += later.flushed;
  into.overflowed += later.overflowed;
  into.high_max_abs = std::max(into.high_max_abs, later.high_max_abs);
  into.high_min_nonzero_abs = std::min(into.high_min_nonzero_abs, later.high_min_nonzero_abs);
  into.sets += later.sets;
  into.sets_empty += later.sets_empty;
  into.sets_differing += later.sets_differing;
}

} // namespace npucc::accuracy
