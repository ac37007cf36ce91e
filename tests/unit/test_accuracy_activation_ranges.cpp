#include "accuracy/activation_ranges.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace npucc;

namespace {

constexpr double k_half_max = 65504.0;
constexpr double k_half_normal = 6.103515625e-05;

runtime::Tensor float_tensor(const std::vector<float>& values) {
  runtime::Tensor tensor;
  tensor.name = "v";
  tensor.type = onnx::TensorProto::FLOAT;
  tensor.shape = {static_cast<int64_t>(values.size())};
  tensor.bytes.resize(values.size() * sizeof(float));
  std::memcpy(tensor.bytes.data(), values.data(), tensor.bytes.size());
  return tensor;
}

std::string verdict_of(const std::vector<std::vector<float>>& sets) {
  accuracy::ValueRange range;
  for (const auto& set : sets) {
    accuracy::fold_range(range, float_tensor(set), k_half_normal);
  }
  return accuracy::range_verdict(range, k_half_max, k_half_normal);
}

} // namespace

TEST_SUITE("npucc::accuracy::activation_ranges") {
  TEST_CASE("a value past float16's largest overflows; 65504 itself fits") {
    CHECK(verdict_of({{1.0F, -65504.0F}}).empty());
    CHECK(verdict_of({{1.0F}, {-104000.0F}}) == "max 1.04e+05 > 65504");
  }

  TEST_CASE("more than half of the non-zero values below the smallest normal underflows") {
    // Zeros do not count: 2 of 3 non-zero values are subnormal.
    CHECK(verdict_of({{0.0F, 0.0F, 1e-6F, 2e-6F, 1.0F}}) ==
          "66.7% of non-zero values below 6.10352e-05 (max 1)");
    CHECK(verdict_of({{1e-6F, 1.0F}}).empty()); // exactly half: kept low
    CHECK(verdict_of({{0.0F, 0.0F}}).empty());  // all zero: nothing to lose
  }

  TEST_CASE("non-finite elements are not a range") {
    const float inf = std::numeric_limits<float>::infinity();
    CHECK(verdict_of({{inf, std::nanf(""), 2.0F}}).empty());
  }
}
