// Throughput of npucc's float32 -> float16 / bfloat16 conversion against memcpy of the
// same input, in GB/s of float32 read. Built and run by tests/bench/run (not by CMake).
//
//     convert_bench [REPS]   prints path=..., memcpy=..., float16=..., bfloat16=...

#include "precision/float_convert.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

namespace {

// Larger than any cache, as weights are: this measures memory speed.
constexpr size_t k_floats = size_t{64} << 20; // 256 MiB of float32

double best_rate(int reps, size_t bytes, const std::function<void()>& work) {
  std::vector<double> seconds;
  for (int i = 0; i < reps + 1; ++i) { // the first run faults the pages in
    auto start = std::chrono::steady_clock::now();
    work();
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  seconds.erase(seconds.begin());
  std::sort(seconds.begin(), seconds.end());
  return static_cast<double>(bytes) / seconds[seconds.size() / 2] / 1e9;
}

} // namespace

int main(int argc, char** argv) {
  namespace p = npucc::precision;
  int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  std::vector<float> in(k_floats);
  for (size_t i = 0; i < in.size(); ++i) {
    in[i] = static_cast<float>(static_cast<int32_t>(i * 2654435761u)) * 1e-9f;
  }
  std::vector<float> copy(k_floats);
  std::vector<uint16_t> out(k_floats);
  const size_t bytes = k_floats * sizeof(float);
  double memcpy_rate = best_rate(reps, bytes, [&] { std::memcpy(copy.data(), in.data(), bytes); });
  double half = best_rate(reps, bytes, [&] { p::float_to_half(in.data(), out.data(), k_floats); });
  double bf16 =
      best_rate(reps, bytes, [&] { p::float_to_bfloat16(in.data(), out.data(), k_floats); });
  std::printf("path=%s\nmemcpy=%.2f\nfloat16=%.2f\nbfloat16=%.2f\n",
              p::detail::has_simd_half() ? "SIMD" : "scalar", memcpy_rate, half, bf16);
  return 0;
}
