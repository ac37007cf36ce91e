#include "precision/float_convert.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <doctest/doctest.h>
#include <limits>
#include <string>
#include <vector>

namespace fc = npucc::precision;
using fc::detail::Kernel;

namespace {

float from_bits(uint32_t bits) {
  float value = 0;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

uint32_t to_bits(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

std::string hex(uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", value);
  return text;
}

// Independent of the implementation: the result must be a nearest representable value, and
// of two equally near ones the even one. `widen` maps a low-type magnitude code to its value;
// `max_finite` is the largest finite code.
template <typename Widen>
void check_nearest_even(float x, uint16_t result, uint16_t max_finite, Widen widen) {
  const uint16_t sign = static_cast<uint16_t>(result & 0x8000u);
  const uint16_t code = static_cast<uint16_t>(result & 0x7fffu);
  REQUIRE(code <= max_finite);
  REQUIRE((sign != 0) == std::signbit(x));
  const double target = std::fabs(static_cast<double>(x));
  const double distance = std::fabs(target - static_cast<double>(widen(code)));
  for (int step : {-1, 1}) {
    const int neighbour = code + step;
    if (neighbour < 0 || neighbour > max_finite) {
      continue;
    }
    const double other =
        std::fabs(target - static_cast<double>(widen(static_cast<uint16_t>(neighbour))));
    INFO("x bits " << hex(to_bits(x)) << " result " << hex(result));
    REQUIRE(distance <= other);
    if (distance == other) {
      REQUIRE((code & 1u) == 0);
    }
  }
}

constexpr uint64_t k_all_patterns = uint64_t{1} << 32;
constexpr uint64_t k_prime_stride = 89; // ~48M samples spread over every exponent and payload

} // namespace

TEST_SUITE("npucc::precision::float_convert") {
  TEST_CASE("float16 known values") {
    CHECK(fc::float_to_half(0.0f) == 0x0000);
    CHECK(fc::float_to_half(-0.0f) == 0x8000);
    CHECK(fc::float_to_half(1.0f) == 0x3c00);
    CHECK(fc::float_to_half(65504.0f) == 0x7bff);
    CHECK(fc::float_to_half(65519.0f) == 0x7bff);
    CHECK(fc::float_to_half(65520.0f) == 0x7c00);
    CHECK(fc::float_to_half(-65520.0f) == 0xfc00);
    CHECK(fc::float_to_half(1e10f) == 0x7c00);
    CHECK(fc::float_to_half(std::numeric_limits<float>::infinity()) == 0x7c00);
    CHECK(fc::float_to_half(-std::numeric_limits<float>::infinity()) == 0xfc00);
    // Gradual underflow with ties to even.
    CHECK(fc::float_to_half(std::ldexp(1.0f, -24)) == 0x0001);
    CHECK(fc::float_to_half(std::ldexp(1.0f, -25)) == 0x0000);
    CHECK(fc::float_to_half(-std::ldexp(1.0f, -25)) == 0x8000);
    CHECK(fc::float_to_half(std::nextafter(std::ldexp(1.0f, -25), 1.0f)) == 0x0001);
    CHECK(fc::float_to_half(3 * std::ldexp(1.0f, -25)) == 0x0002);
    CHECK(fc::float_to_half(std::ldexp(1.0f, -14)) == 0x0400);
    CHECK(fc::float_to_half(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -25)) == 0x0400);
    CHECK(fc::float_to_half(1023 * std::ldexp(1.0f, -24)) == 0x03ff);
    CHECK(fc::float_to_half(1e-40f) == 0x0000); // float32 subnormal
    CHECK(fc::float_to_half(-1e-40f) == 0x8000);
    // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: even wins.
    CHECK(fc::float_to_half(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);
    CHECK(fc::float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);
    CHECK(fc::float_to_half(1.0f + std::ldexp(1.0f, -10)) == 0x3c01);
    // NaN: quiet, sign and top payload bits kept.
    CHECK(fc::float_to_half(from_bits(0x7fc00000u)) == 0x7e00);
    CHECK(fc::float_to_half(from_bits(0xffc00000u)) == 0xfe00);
    CHECK(fc::float_to_half(from_bits(0x7f800001u)) == 0x7e00);
    CHECK(fc::float_to_half(from_bits(0x7fa00000u)) == 0x7f00);
    CHECK(fc::float_to_half(from_bits(0xff812000u)) == 0xfe09);

    CHECK(to_bits(fc::half_to_float(0x0001)) == to_bits(std::ldexp(1.0f, -24)));
    CHECK(fc::half_to_float(0x03ff) == 1023 * std::ldexp(1.0f, -24));
    CHECK(fc::half_to_float(0x7bff) == 65504.0f);
    CHECK(to_bits(fc::half_to_float(0x8000)) == 0x80000000u);
    CHECK(to_bits(fc::half_to_float(0x7c00)) == 0x7f800000u);
    CHECK(to_bits(fc::half_to_float(0x7c01)) == 0x7fc02000u); // signalling -> quiet
    CHECK(to_bits(fc::half_to_float(0xfe00)) == 0xffc00000u);
  }

  TEST_CASE("bfloat16 known values") {
    CHECK(fc::float_to_bfloat16(1.0f) == 0x3f80);
    CHECK(fc::float_to_bfloat16(-0.0f) == 0x8000);
    CHECK(fc::float_to_bfloat16(1.0f + std::ldexp(1.0f, -8)) == 0x3f80); // tie -> even
    CHECK(fc::float_to_bfloat16(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3f82);
    CHECK(fc::float_to_bfloat16(std::nextafter(1.0f + std::ldexp(1.0f, -8), 2.0f)) == 0x3f81);
    CHECK(fc::float_to_bfloat16(65504.0f) == 0x4780);
    CHECK(fc::float_to_bfloat16(std::numeric_limits<float>::max()) == 0x7f80);
    CHECK(fc::float_to_bfloat16(-std::numeric_limits<float>::max()) == 0xff80);
    CHECK(fc::float_to_bfloat16(from_bits(0x7f7f7fffu)) == 0x7f7f);
    CHECK(fc::float_to_bfloat16(from_bits(0x7f7f8000u)) == 0x7f80);
    CHECK(fc::float_to_bfloat16(std::numeric_limits<float>::infinity()) == 0x7f80);
    // float32 subnormals keep their bits (RNE), never flushed.
    CHECK(fc::float_to_bfloat16(1e-40f) == 0x0001);
    CHECK(fc::float_to_bfloat16(from_bits(0x00008000u)) == 0x0000);
    CHECK(fc::float_to_bfloat16(from_bits(0x00018000u)) == 0x0002);
    CHECK(fc::float_to_bfloat16(from_bits(0x80018001u)) == 0x8002);
    // NaN: truncating 0x7f800001 would give inf; it must stay a quiet NaN.
    CHECK(fc::float_to_bfloat16(from_bits(0x7f800001u)) == 0x7fc0);
    CHECK(fc::float_to_bfloat16(from_bits(0xff810000u)) == 0xffc1);
    CHECK(fc::float_to_bfloat16(from_bits(0x7fffffffu)) == 0x7fff);

    CHECK(fc::bfloat16_to_float(0x3f80) == 1.0f);
    CHECK(to_bits(fc::bfloat16_to_float(0x0001)) == 0x00010000u);
    CHECK(to_bits(fc::bfloat16_to_float(0x7f81)) == 0x7fc10000u);
    CHECK(to_bits(fc::bfloat16_to_float(0xff80)) == 0xff800000u);
  }

  TEST_CASE("overflow counts") {
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float max = std::numeric_limits<float>::max();
    std::vector<float> values = {65519.0f,
                                 65520.0f,
                                 -65520.0f,
                                 inf,
                                 nan,
                                 1e5f,
                                 -1e38f,
                                 0.0f,
                                 max,
                                 -max,
                                 from_bits(0x7f7f7fffu),
                                 from_bits(0x7f7f8000u),
                                 -inf};
    // Repeat so the SIMD body and the tail both see every case.
    std::vector<float> many;
    for (int i = 0; i < 5; ++i) {
      many.insert(many.end(), values.begin(), values.end());
    }
    for (Kernel kernel : {Kernel::scalar, Kernel::simd}) {
      CAPTURE(static_cast<int>(kernel));
      CHECK(fc::detail::count_half_overflows(values.data(), values.size(), kernel) == 8);
      CHECK(fc::detail::count_half_overflows(many.data(), many.size(), kernel) == 40);
      CHECK(fc::detail::count_bfloat16_overflows(values.data(), values.size(), kernel) == 3);
      CHECK(fc::detail::count_bfloat16_overflows(many.data(), many.size(), kernel) == 15);
    }
    CHECK(fc::count_half_overflows(many.data(), many.size()) == 40);
    CHECK(fc::count_bfloat16_overflows(many.data(), 0) == 0);
  }

  TEST_CASE("results are nearest-even by an independent check") {
    auto widen_half = [](uint16_t code) { return fc::half_to_float(code); };
    auto widen_bf16 = [](uint16_t code) { return fc::bfloat16_to_float(code); };
    // A sparser prime stride keeps this exact-distance check fast.
    for (uint64_t bits = 7; bits < k_all_patterns; bits += 4099) {
      const float x = from_bits(static_cast<uint32_t>(bits));
      if (!std::isfinite(x)) {
        continue;
      }
      if (std::fabs(x) < 65520.0f) {
        check_nearest_even(x, fc::float_to_half(x), 0x7bff, widen_half);
      }
      if ((to_bits(x) & 0x7fffffffu) < 0x7f7f8000u) {
        check_nearest_even(x, fc::float_to_bfloat16(x), 0x7f7f, widen_bf16);
      }
    }
  }

  TEST_CASE("SIMD and scalar paths give the same bits") {
    MESSAGE("SIMD float16: " << fc::detail::has_simd_half()
                             << ", SIMD bfloat16: " << fc::detail::has_simd_bfloat16());
    constexpr size_t chunk = size_t{1} << 20;
    std::vector<float> in;
    in.reserve(chunk);
    std::vector<uint16_t> simd(chunk);
    std::vector<uint16_t> scalar(chunk);
    size_t mismatches = 0;
    size_t total = 0;
    auto flush = [&] {
      for (auto convert : {&fc::detail::float_to_half, &fc::detail::float_to_bfloat16}) {
        convert(in.data(), simd.data(), in.size(), Kernel::simd);
        convert(in.data(), scalar.data(), in.size(), Kernel::scalar);
        for (size_t i = 0; i < in.size(); ++i) {
          if (simd[i] != scalar[i] && mismatches++ < 10) {
            MESSAGE("mismatch at float bits " << hex(to_bits(in[i])) << ": " << hex(simd[i])
                                              << " vs " << hex(scalar[i]));
          }
        }
      }
      total += in.size();
      in.clear();
    };
    for (uint64_t bits = 0; bits < k_all_patterns; bits += k_prime_stride) {
      in.push_back(from_bits(static_cast<uint32_t>(bits)));
      if (in.size() == chunk) {
        flush();
      }
    }
    // Every pattern around the rounding boundaries of both types, and all NaN/inf edges.
    for (uint32_t base : {0x477fe000u, 0x7f7f0000u, 0x7f800000u, 0x33000000u, 0x38800000u,
                          0x00000000u, 0xff800000u, 0xb3000000u}) {
      for (uint32_t offset = 0; offset < 0x10000u; ++offset) {
        in.push_back(from_bits(base + offset));
      }
    }
    flush();
    CHECK(total > 48000000);
    CHECK(mismatches == 0);
  }

  TEST_CASE("every float16 and bfloat16 round-trips, on both paths") {
    std::vector<uint16_t> codes(0x10000);
    for (uint32_t i = 0; i < 0x10000u; ++i) {
      codes[i] = static_cast<uint16_t>(i);
    }
    std::vector<float> wide_simd(codes.size());
    std::vector<float> wide_scalar(codes.size());
    std::vector<uint16_t> back(codes.size());

    struct Type {
      void (*widen)(const uint16_t*, float*, size_t, Kernel);
      void (*narrow)(const float*, uint16_t*, size_t, Kernel);
      uint16_t exponent_mask;
      uint16_t quiet_bit;
    };
    for (const Type& type :
         {Type{&fc::detail::half_to_float, &fc::detail::float_to_half, 0x7c00, 0x0200},
          Type{&fc::detail::bfloat16_to_float, &fc::detail::float_to_bfloat16, 0x7f80, 0x0040}}) {
      CAPTURE(type.quiet_bit);
      type.widen(codes.data(), wide_simd.data(), codes.size(), Kernel::simd);
      type.widen(codes.data(), wide_scalar.data(), codes.size(), Kernel::scalar);
      size_t widen_mismatches = 0;
      size_t trip_mismatches = 0;
      for (size_t i = 0; i < codes.size(); ++i) {
        widen_mismatches += to_bits(wide_simd[i]) != to_bits(wide_scalar[i]) ? 1 : 0;
      }
      for (Kernel kernel : {Kernel::simd, Kernel::scalar}) {
        type.narrow(wide_scalar.data(), back.data(), codes.size(), kernel);
        for (size_t i = 0; i < codes.size(); ++i) {
          const uint16_t code = codes[i];
          const bool is_nan = (code & type.exponent_mask) == type.exponent_mask &&
                              (code & ~(type.exponent_mask | 0x8000u)) != 0;
          const uint16_t expected = is_nan ? static_cast<uint16_t>(code | type.quiet_bit) : code;
          trip_mismatches += back[i] != expected ? 1 : 0;
        }
      }
      CHECK(widen_mismatches == 0);
      CHECK(trip_mismatches == 0);
    }
  }

  TEST_CASE("array API handles every tail length") {
    std::vector<float> in;
    for (int i = 0; i < 70; ++i) {
      in.push_back(static_cast<float>(i) * 1234.567f - 40000.0f + 1e-6f * static_cast<float>(i));
    }
    in[3] = std::numeric_limits<float>::quiet_NaN();
    for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{15}, size_t{17}, size_t{33},
                     size_t{70}}) {
      CAPTURE(n);
      std::vector<uint16_t> half(n + 1, 0xabcd);
      std::vector<uint16_t> bf16(n + 1, 0xabcd);
      fc::float_to_half(in.data(), half.data(), n);
      fc::float_to_bfloat16(in.data(), bf16.data(), n);
      CHECK(half[n] == 0xabcd); // nothing written past the end
      CHECK(bf16[n] == 0xabcd);
      std::vector<float> back_half(n);
      std::vector<float> back_bf16(n);
      fc::half_to_float(half.data(), back_half.data(), n);
      fc::bfloat16_to_float(bf16.data(), back_bf16.data(), n);
      for (size_t i = 0; i < n; ++i) {
        CHECK(half[i] == fc::float_to_half(in[i]));
        CHECK(bf16[i] == fc::float_to_bfloat16(in[i]));
        CHECK(to_bits(back_half[i]) == to_bits(fc::half_to_float(half[i])));
        CHECK(to_bits(back_bf16[i]) == to_bits(fc::bfloat16_to_float(bf16[i])));
      }
    }
  }
}

#include <chrono>
#include <random>

TEST_SUITE("npucc::precision::float_convert") {
  // Not a pass/fail test (the machine may be shared): run with
  //   npucc_unit_tests -tc="conversion throughput" --no-skip
  // to print G elements/s for each path at an in-cache and a DRAM-sized buffer.
  TEST_CASE("conversion throughput" * doctest::skip()) {
    for (size_t n : {size_t{1} << 14, size_t{1} << 26}) {
      std::vector<float> in(n);
      std::mt19937 generator(7);
      std::normal_distribution<float> distribution(0.0f, 3.0f);
      for (auto& value : in) {
        value = distribution(generator);
      }
      std::vector<uint16_t> narrow(n);
      std::vector<float> wide(n);
      const int repeats = n < (size_t{1} << 20) ? 2000 : 2;
      auto measure = [&](const std::string& name, auto&& convert) {
        double best = 1e30;
        for (int round = 0; round < 5; ++round) {
          const auto start = std::chrono::steady_clock::now();
          for (int i = 0; i < repeats; ++i) {
            convert();
          }
          const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
          best = std::min(best, took.count());
        }
        MESSAGE(name << " n=" << n << ": " << static_cast<double>(n) * repeats / best / 1e9
                     << " G elements/s");
      };
      for (Kernel kernel : {Kernel::scalar, Kernel::simd}) {
        const std::string path = kernel == Kernel::scalar ? "scalar" : "simd";
        measure(path + " float32->float16",
                [&] { fc::detail::float_to_half(in.data(), narrow.data(), n, kernel); });
        measure(path + " float16->float32",
                [&] { fc::detail::half_to_float(narrow.data(), wide.data(), n, kernel); });
        measure(path + " float32->bfloat16",
                [&] { fc::detail::float_to_bfloat16(in.data(), narrow.data(), n, kernel); });
        measure(path + " bfloat16->float32",
                [&] { fc::detail::bfloat16_to_float(narrow.data(), wide.data(), n, kernel); });
      }
    }
  }
}
