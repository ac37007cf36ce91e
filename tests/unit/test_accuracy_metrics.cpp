#include "accuracy/metrics.h"

#include "npucc/error.h"
#include "precision/float_convert.h"

#include <cmath>
#include <cstring>
#include <doctest/doctest.h>
#include <limits>
#include <onnx/onnx_pb.h>

using namespace npucc;
using npucc::runtime::Tensor;

namespace {

Tensor floats(const std::vector<float>& values, std::vector<int64_t> shape = {}) {
  Tensor tensor{"y", onnx::TensorProto::FLOAT,
                shape.empty() ? std::vector<int64_t>{static_cast<int64_t>(values.size())} : shape,
                std::string(values.size() * 4, '\0')};
  std::memcpy(tensor.bytes.data(), values.data(), tensor.bytes.size());
  return tensor;
}

} // namespace

TEST_SUITE("npucc::accuracy::metrics") {
  TEST_CASE("identical outputs: cosine 1, no error") {
    auto m = accuracy::compare_output(floats({1, -2, 3}), floats({1, -2, 3}));
    CHECK(m.cosine == doctest::Approx(1.0).epsilon(1e-15));
    CHECK(m.max_abs_error == 0);
    CHECK(m.max_rel_error == 0);
    CHECK(m.nonfinite == 0);
    CHECK(m.elements == 3);
  }

  TEST_CASE("figures worked by hand") {
    // high (3, 4), low (3, 4.5): cosine = (9 + 18) / (5 * sqrt(29.25)); abs 0.5; rel 0.5 / 4.
    auto m = accuracy::compare_output(floats({3, 4}), floats({3, 4.5}));
    CHECK(m.cosine == doctest::Approx(27.0 / (5.0 * std::sqrt(29.25))).epsilon(1e-12));
    CHECK(m.max_abs_error == doctest::Approx(0.5));
    CHECK(m.max_rel_error == doctest::Approx(0.125));
    // Orthogonal and opposite.
    CHECK(accuracy::compare_output(floats({1, 0}), floats({0, 1})).cosine == doctest::Approx(0));
    CHECK(accuracy::compare_output(floats({1, 2}), floats({-1, -2})).cosine == doctest::Approx(-1));
  }

  TEST_CASE("the relative error's floor is 1e-3 of the largest high value") {
    // |high| = 0 next to 1000: the error 0.5 is divided by 1 (1e-3 * 1000), not by 0.
    auto m = accuracy::compare_output(floats({1000, 0}), floats({1000, 0.5}));
    CHECK(m.max_rel_error == doctest::Approx(0.5));
    // All zero: the floor is 1e-6.
    m = accuracy::compare_output(floats({0}), floats({1e-6f}));
    CHECK(m.max_rel_error == doctest::Approx(1.0).epsilon(1e-6));
  }

  TEST_CASE("non-finite low values where high is finite are counted and left out") {
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    auto m = accuracy::compare_output(floats({1, 2, nan, 4}), floats({1, inf, nan, 4}));
    CHECK(m.nonfinite == 1); // the NaN float32 gives too is the model's own
    CHECK(m.elements == 2);
    CHECK(m.cosine == doctest::Approx(1.0));
    // Nothing finite left: as far apart as it gets, whatever the norms.
    m = accuracy::compare_output(floats({1, 2}), floats({inf, -inf}));
    CHECK(m.nonfinite == 2);
    CHECK(m.cosine == 0);
  }

  TEST_CASE("zero vectors") {
    CHECK(accuracy::compare_output(floats({0, 0}), floats({0, 0})).cosine == 1);
    CHECK(accuracy::compare_output(floats({0, 0}), floats({0, 1})).cosine == 0);
  }

  TEST_CASE("float16 and bfloat16 outputs are decoded") {
    Tensor half{"y", onnx::TensorProto::FLOAT16, {2}, std::string(4, '\0')};
    uint16_t bits[2] = {precision::float_to_half(1.5f), precision::float_to_half(-2.0f)};
    std::memcpy(half.bytes.data(), bits, 4);
    CHECK(accuracy::to_doubles(half) == std::vector<double>{1.5, -2.0});
    Tensor bf16{"y", onnx::TensorProto::BFLOAT16, {1}, std::string(2, '\0')};
    uint16_t b = precision::float_to_bfloat16(3.0f);
    std::memcpy(bf16.bytes.data(), &b, 2);
    CHECK(accuracy::to_doubles(bf16) == std::vector<double>{3.0});
    Tensor ints{"i", onnx::TensorProto::INT64, {1}, std::string(8, '\0')};
    int64_t v = -7;
    std::memcpy(ints.bytes.data(), &v, 8);
    CHECK(accuracy::to_doubles(ints) == std::vector<double>{-7.0});
    Tensor text{"s", onnx::TensorProto::STRING, {1}, ""};
    CHECK_THROWS_AS(accuracy::to_doubles(text), Error);
  }

  TEST_CASE("different shapes are an error naming the output") {
    CHECK_THROWS_WITH_AS(accuracy::compare_output(floats({1, 2}), floats({1, 2}, {2, 1})),
                         doctest::Contains("output 'y'"), Error);
  }

  TEST_CASE("over samples: the lowest cosine, the largest errors, summed non-finite") {
    accuracy::OutputMetrics total;
    accuracy::OutputMetrics a{"y", 0.99, 0.1, 0.2, 1, 10};
    accuracy::OutputMetrics b{"y", 0.95, 0.05, 0.3, 2, 10};
    accuracy::merge(total, a);
    accuracy::merge(total, b);
    CHECK(total.cosine == 0.95);
    CHECK(total.max_abs_error == 0.1);
    CHECK(total.max_rel_error == 0.3);
    CHECK(total.nonfinite == 3);
    CHECK(total.elements == 20);
  }
}
