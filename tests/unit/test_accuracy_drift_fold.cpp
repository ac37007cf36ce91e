#include "accuracy/body_probe.h"
#include "accuracy/drift_elements.h"
#include "accuracy/drift_fold.h"

#include "npucc/error.h"
#include "runtime/runtime.h"

#include <cmath>
#include <cstring>
#include <doctest/doctest.h>
#include <limits>
#include <onnx/onnx_pb.h>

using namespace npucc;

namespace {

runtime::Tensor fold_floats(const std::vector<float>& values) {
  runtime::Tensor tensor{"v", onnx::TensorProto::FLOAT, {static_cast<int64_t>(values.size())},
                         std::string(values.size() * 4, '\0')};
  std::memcpy(tensor.bytes.data(), values.data(), tensor.bytes.size());
  return tensor;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void check_same(const accuracy::DriftFigures& a, const accuracy::DriftFigures& b) {
  CHECK(a.elements == b.elements);
  CHECK(a.total == b.total);
  CHECK(same_bits(a.cosine, b.cosine));
  CHECK(a.cosine_undefined == b.cosine_undefined);
  CHECK(same_bits(a.max_abs_error, b.max_abs_error));
  CHECK(a.flushed == b.flushed);
  CHECK(a.overflowed == b.overflowed);
  CHECK(same_bits(a.high_max_abs, b.high_max_abs));
  CHECK(same_bits(a.high_min_nonzero_abs, b.high_min_nonzero_abs));
  CHECK(a.sets == b.sets);
  CHECK(a.sets_empty == b.sets_empty);
  CHECK(a.sets_differing == b.sets_differing);
}

const std::vector<float> k_high = {1, 2, 3, 4, 5, 6, 7, 1e-9f};

} // namespace

TEST_SUITE("npucc::accuracy::drift_fold") {
  TEST_CASE("figures cross the runtime's channel bit for bit, NaN and infinity too") {
    accuracy::DriftFoldResult sent;
    sent.fold_seconds = 0.25;
    sent.figures.resize(2);
    std::vector<float> low = k_high;
    low[3] = std::numeric_limits<float>::infinity();
    accuracy::fold_drift(sent.figures[0], fold_floats(k_high), fold_floats(low));
    accuracy::fold_drift(sent.figures[1], fold_floats({0, 0, 0}), fold_floats({0, 0, 0}));
    REQUIRE(std::isnan(sent.figures[0].cosine));
    REQUIRE(std::isinf(sent.figures[1].high_min_nonzero_abs));
    const auto got = accuracy::decode_drift_fold(accuracy::encode_drift_fold(sent));
    CHECK(got.fold_seconds == 0.25);
    REQUIRE(got.figures.size() == 2);
    check_same(got.figures[0], sent.figures[0]);
    check_same(got.figures[1], sent.figures[1]);
    const auto bytes = accuracy::encode_drift_fold(sent);
    CHECK_THROWS_WITH_AS(accuracy::decode_drift_fold(bytes.substr(0, bytes.size() - 1)),
                         doctest::Contains("did not arrive intact"), Error);
    CHECK_THROWS_AS(accuracy::decode_drift_fold(bytes + "1:x"), Error);
  }

  TEST_CASE("merging two runs' figures gives what one run over both sets gives") {
    // Set 1: an overflow (no cosine, its reason kept); set 2: a flush and an error; set 3:
    // exact, a smaller non-zero magnitude.
    std::vector<float> overflowed = k_high, flushed = k_high;
    overflowed[6] = std::numeric_limits<float>::infinity();
    flushed[7] = 0;
    flushed[0] = 1.5f;
    const std::vector<float> small = {1e-12f, 2, 3, 4, 5, 6, 7, 8};
    accuracy::DriftFigures whole, first, second;
    for (auto* f : {&whole, &first}) {
      accuracy::fold_drift(*f, fold_floats(k_high), fold_floats(overflowed));
    }
    for (auto* f : {&whole, &second}) {
      accuracy::fold_drift(*f, fold_floats(k_high), fold_floats(flushed));
      accuracy::fold_drift(*f, fold_floats(small), fold_floats(small));
    }
    accuracy::merge_drift(first, second);
    check_same(first, whole);
    CHECK(whole.total == 24);
    CHECK_FALSE(whole.cosine_undefined.empty());
    CHECK(whole.cosine < 1);
  }

  TEST_CASE("the drift fold is registered with the runtime and names both graphs on a mismatch") {
    auto fold = runtime::make_pair_fold(accuracy::k_drift_fold, "the high graph", "the emulation");
    const auto high = fold_floats(k_high);
    const auto low = fold_floats({1, 2});
    fold->fold({runtime::view_of(high)}, {runtime::view_of(high)});
    const auto result = accuracy::decode_drift_fold(fold->result());
    REQUIRE(result.figures.size() == 1);
    CHECK(result.figures[0].cosine == doctest::Approx(1.0));
    CHECK_THROWS_WITH_AS(fold->fold({runtime::view_of(high)}, {runtime::view_of(low)}),
                         doctest::Contains("value 'v' is float32[8] in the high graph and "
                                           "float32[2] in the emulation"),
                         Error);
  }

  TEST_CASE("a body value's empty or differing sets are counted, not folded, and cross intact") {
    auto fold = runtime::make_pair_fold(accuracy::k_drift_fold, "the high graph", "the emulation");
    auto high = fold_floats(k_high);
    auto low = fold_floats({1, 2});
    auto empty = fold_floats({});
    high.name = low.name = empty.name = std::string(accuracy::k_body_probe_prefix) + "0";
    fold->fold({runtime::view_of(high)}, {runtime::view_of(low)});     // another branch taken
    fold->fold({runtime::view_of(empty)}, {runtime::view_of(empty)});  // the branch not run
    fold->fold({runtime::view_of(high)}, {runtime::view_of(high)});    // compared
    const auto sent = accuracy::decode_drift_fold(fold->result());
    REQUIRE(sent.figures.size() == 1);
    CHECK(sent.figures[0].sets == 1);
    CHECK(sent.figures[0].sets_empty == 1);
    CHECK(sent.figures[0].sets_differing == 1);
    CHECK(sent.figures[0].total == 8);
    accuracy::DriftFigures merged = sent.figures[0];
    accuracy::merge_drift(merged, sent.figures[0]);
    CHECK(merged.sets == 2);
    CHECK(merged.sets_empty == 2);
    CHECK(merged.sets_differing == 2);
  }
}

TEST_SUITE("npucc::accuracy::drift_elements") {
  TEST_CASE("float32's four-at-a-time fold gives the element-by-element fold's bits") {
    // Values of every kind: ordinary, zero and -0, subnormal, huge, infinite, NaN, flushed.
    const float specials[] = {0.0f, -0.0f, 1e-40f, -3e-39f, 65504.0f, 3e38f, -1.5f,
                              std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity(),
                              std::numeric_limits<float>::quiet_NaN()};
    std::vector<float> high, low;
    uint32_t state = 12345;
    auto next = [&] { return state = state * 1664525u + 1013904223u; };
    for (size_t i = 0; i < 4103; ++i) { // not a multiple of 4: a tail too
      const float h = static_cast<float>(static_cast<int32_t>(next())) * 1e-7f;
      const uint32_t pick = next() % 40;
      high.push_back(pick < 10 ? specials[pick] : h);
      const uint32_t low_pick = next() % 40;
      low.push_back(low_pick < 10 ? specials[low_pick] : (low_pick < 14 ? 0.0f : h * 1.001f));
    }
    std::vector<double> high_doubles(high.begin(), high.end()), low_doubles(low.begin(), low.end());
    for (size_t split : {size_t{0}, size_t{1}, size_t{2050}}) { // one call, or continued
      accuracy::DriftFigures by_float, by_double;
      accuracy::DriftPass float_pass, double_pass;
      accuracy::fold_elements(by_float, high.data(), low.data(), split, float_pass);
      accuracy::fold_elements(by_float, high.data() + split, low.data() + split,
                              high.size() - split, float_pass);
      accuracy::fold_elements(by_double, high_doubles.data(), low_doubles.data(), high.size(),
                              double_pass);
      check_same(by_float, by_double);
      CHECK(same_bits(float_pass.dot, double_pass.dot));
      CHECK(same_bits(float_pass.norm_high, double_pass.norm_high));
      CHECK(same_bits(float_pass.norm_low, double_pass.norm_low));
      CHECK(float_pass.high_nonfinite == double_pass.high_nonfinite);
      CHECK(float_pass.low_nonfinite == double_pass.low_nonfinite);
      CHECK(by_float.flushed > 0);
      CHECK(by_float.overflowed > 0);
    }
  }
}
