#include "accuracy/metrics.h"

#include "accuracy/check.h"

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
  // 16 elements: enough to have a cosine (k_min_cosine_elements).
  const std::vector<float> k_high = {0.1f, 2.0f, -1.0f, 0.5f, 3.0f, -2.0f, 0.25f, 1.0f,
                                     0.0f, 0.0f, 1.5f, -0.5f, 1.0f, 1.0f, 0.9f, -3.0f};
  const std::vector<float> k_low = {0.2f, 1.9f, -1.0f, 2.1f, 2.5f, -2.0f, 3.0f, 1.0f,
                                    0.0f, 0.1f, 1.4f, -0.5f, 1.0f, 0.8f, 1.2f, -3.0f};

  double figure(const accuracy::SampleMetrics& m, const std::string& name) {
    const auto& f = m.figures.at(name);
    REQUIRE_MESSAGE(f.defined(), name << " undefined: " << f.undefined);
    return f.value;
  }

  TEST_CASE("identical outputs: cosine 1, no error, psnr and snr infinite") {
    auto m = accuracy::compare_output(floats(k_high, {4, 4}), floats(k_high, {4, 4}));
    CHECK(figure(m, "cosine") == doctest::Approx(1.0).epsilon(1e-15));
    CHECK(m.max_abs_error == 0);
    CHECK(m.max_rel_error == 0);
    CHECK(m.nonfinite == 0);
    CHECK(m.elements == 16);
    CHECK(std::isinf(figure(m, "psnr")));
    CHECK(std::isinf(figure(m, "snr_db")));
    CHECK(figure(m, "top1") == 1);
  }

  TEST_CASE("every figure against NumPy on known arrays") {
    // Expected values from NumPy 1.24 on the same float32 arrays widened to float64
    // (h, l = k_high, k_low reshaped (4, 4)):
    //   cosine  h.ravel() @ l.ravel() / norm(h) / norm(l)                  0.8708096247632925
    //   top1    mean(argmax(h, -1) == argmax(l, -1))                       0.25
    //   iou@0.5 sum((h > .5) & (l > .5)) / sum((h > .5) | (l > .5))        0.7777777777777778
    //   psnr    10 log10((h.max() - h.min())**2 / mean((h - l)**2))        17.374788843190494
    //   snr_db  10 log10(sum(h**2) / sum((h - l)**2))                      5.038155512120703
    //   close   mean(isclose(l, h, rtol=0.05, atol=0.1))                   0.625
    //   max abs max(abs(l - h))                                            2.75
    accuracy::FigureRequests requests;
    requests.iou_thresholds = {0.5};
    requests.tolerances = {{0.1, 0.05}};
    auto m = accuracy::compare_output(floats(k_high, {4, 4}), floats(k_low, {4, 4}), requests);
    CHECK(figure(m, "cosine") == doctest::Approx(0.8708096247632925).epsilon(1e-12));
    CHECK(figure(m, "top1") == 0.25);
    CHECK(figure(m, "iou@0.5") == doctest::Approx(0.7777777777777778).epsilon(1e-12));
    CHECK(figure(m, "psnr") == doctest::Approx(17.374788843190494).epsilon(1e-12));
    CHECK(figure(m, "snr_db") == doctest::Approx(5.038155512120703).epsilon(1e-12));
    CHECK(figure(m, "close[atol=0.1,rtol=0.05]") == 0.625);
    CHECK(m.max_abs_error == doctest::Approx(2.75));
    CHECK(m.size == 16);
    CHECK(m.classes == 4);
  }

  TEST_CASE("the relative error's floor is 1e-3 of the largest high value") {
    // |high| = 0 next to 1000: the error 0.5 is divided by 1 (1e-3 * 1000), not by 0.
    auto m = accuracy::compare_output(floats({1000, 0}), floats({1000, 0.5}));
    CHECK(m.max_rel_error == doctest::Approx(0.5));
    // All zero: the floor is 1e-6.
    m = accuracy::compare_output(floats({0}), floats({1e-6f}));
    CHECK(m.max_rel_error == doctest::Approx(1.0).epsilon(1e-6));
  }

  TEST_CASE("a non-finite value on either side leaves the figures undefined, never perfect") {
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> high = k_high, low = k_high;
    low[1] = inf;
    auto m = accuracy::compare_output(floats(high), floats(low));
    CHECK(m.nonfinite == 1);
    CHECK(m.elements == 15);
    CHECK(m.figures.at("cosine").undefined.find("low output holds 1 non-finite") !=
          std::string::npos);
    CHECK_FALSE(m.figures.at("psnr").defined());
    // The high side all NaN (a NaN input pixel through a classifier): nothing is compared,
    // and no figure reads as a match.
    std::vector<float> nans(16, nan);
    m = accuracy::compare_output(floats(nans), floats(nans));
    CHECK(m.high_nonfinite == 16);
    CHECK(m.elements == 0);
    for (const auto& [name, f] : m.figures) {
      CHECK_MESSAGE(!f.defined(), name);
      CHECK(f.undefined.find("high output holds 16 non-finite values") != std::string::npos);
    }
  }

  TEST_CASE("too few elements, a zero reference, a collapse") {
    // One element: a cosine would only be its sign.
    auto m = accuracy::compare_output(floats({0.7f}), floats({0.1f}));
    CHECK(m.figures.at("cosine").undefined == "1 element per sample, fewer than 8");
    CHECK(m.figures.at("top1").undefined.find("last axis has 1 element") != std::string::npos);
    CHECK(m.max_abs_error == doctest::Approx(0.6));
    // Zero-norm reference.
    m = accuracy::compare_output(floats(std::vector<float>(16, 0)), floats(k_low));
    CHECK(m.figures.at("cosine").undefined.find("zero-norm reference") != std::string::npos);
    CHECK_FALSE(m.figures.at("snr_db").defined());
    // The low output all zero where the high one is not: cosine 0, flagged.
    m = accuracy::compare_output(floats(k_high), floats(std::vector<float>(16, 0)));
    CHECK(figure(m, "cosine") == 0);
    CHECK(m.low_all_zero);
    // IoU with nothing above the threshold on either side.
    accuracy::FigureRequests requests;
    requests.iou_thresholds = {10};
    m = accuracy::compare_output(floats(k_high), floats(k_low), requests);
    CHECK(m.figures.at("iou@10").undefined == "neither output exceeds 10");
  }

  TEST_CASE("top1 follows numpy.argmax: the first maximum, a NaN counts as the maximum") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    // np.argmax([[1, 3, 3], [2, 1, 0]], -1) = [1, 0]; np.argmax([[1, 3, nan], [2, 2, 0]]) =
    // [2, 0]: rows agree 1 of 2.
    auto m = accuracy::compare_output(floats({1, 3, 3, 2, 1, 0}, {2, 3}),
                                      floats({1, 3, nan, 2, 2, 0}, {2, 3}));
    CHECK(figure(m, "top1") == 0.5);
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

  TEST_CASE("over samples: the lowest defined cosine, the largest errors, summed counts") {
    accuracy::OutputMetrics total;
    total.name = "y";
    auto a = accuracy::compare_output(floats(k_high), floats(k_low));
    auto b = accuracy::compare_output(floats(k_high), floats(k_high));
    std::vector<float> broken = k_high;
    broken[0] = std::numeric_limits<float>::infinity();
    auto c = accuracy::compare_output(floats(k_high), floats(broken));
    accuracy::merge(total, b);
    accuracy::merge(total, c);
    accuracy::merge(total, a);
    CHECK(total.cosine == doctest::Approx(0.8708096247632925).epsilon(1e-12));
    CHECK(total.cosine_undefined.find("low output holds 1") != std::string::npos);
    CHECK(total.max_abs_error == doctest::Approx(2.75));
    CHECK(total.nonfinite == 1);
    CHECK(total.elements == 16 + 15 + 16);
    CHECK(total.samples.size() == 3);
    // No sample with a cosine: NaN, not 1.
    accuracy::OutputMetrics tiny;
    accuracy::merge(tiny, accuracy::compare_output(floats({1}), floats({1})));
    CHECK(std::isnan(tiny.cosine));
  }

  TEST_CASE("the report: per-sample figures, a summary per figure, collapse warnings") {
    // numpy: cosines [0.9, 0.99, 0.95, 0.999]: min 0.9 (set 0), mean 0.95975,
    // median (0.95 + 0.99) / 2 = 0.97.
    accuracy::AccuracyReport report;
    report.samples = 4;
    report.sources = {"a.npz", "b.npz", "c.npz", "d.npz"};
    accuracy::OutputMetrics output;
    output.name = "y";
    const double cosines[4] = {0.9, 0.99, 0.95, 0.999};
    for (int64_t s = 0; s < 4; ++s) {
      accuracy::SampleMetrics sample;
      sample.set = s;
      sample.size = sample.elements = 16;
      sample.max_abs_error = 0.1 * static_cast<double>(s + 1);
      sample.figures["cosine"] = {cosines[s], {}};
      sample.figures["psnr"] = {s == 3 ? INFINITY : 30.0, {}};
      sample.figures["top1"] = s == 1 ? accuracy::Figure{NAN, "no argmax"} : accuracy::Figure{1, {}};
      accuracy::merge(output, sample);
    }
    report.outputs = {output};
    const auto json = accuracy::report_json(report);
    const auto& out = json["outputs"][0];
    CHECK(out["cosine"].get<double>() == 0.9);
    CHECK(out["summary"]["cosine"]["worst_set"] == 0);
    CHECK(out["summary"]["cosine"]["median"].get<double>() == doctest::Approx(0.97));
    CHECK(out["summary"]["cosine"]["mean"].get<double>() == doctest::Approx(0.95975));
    CHECK(out["summary"]["max_abs_error"]["worst"].get<double>() == doctest::Approx(0.4));
    CHECK(out["summary"]["max_abs_error"]["worst_set"] == 3);
    CHECK(out["summary"]["psnr"]["mean"] == "inf");
    CHECK(out["summary"]["psnr"]["worst"].get<double>() == 30);
    CHECK(out["summary"]["top1"]["undefined_sets"] == 1);
    CHECK(out["per_sample"][1]["top1"].is_null());
    CHECK(out["per_sample"][1]["undefined"]["top1"] == "no argmax");
    CHECK(out["per_sample"][3]["psnr"] == "inf");
    CHECK(json["sets"][2]["source"] == "c.npz");
    CHECK(json["warnings"].empty());
    const auto lines = accuracy::format_accuracy(json);
    REQUIRE(lines.size() >= 2);
    CHECK(lines[1] == "  y: cosine 0.900000 (median 0.970000, worst set a.npz), max abs error 0.4, "
                      "max rel error 0, 0 non-finite");
    // A cosine far from 1 warns, naming the output and the figure.
    report.outputs[0].cosine = 0.5;
    const auto warned = accuracy::report_json(report);
    REQUIRE(warned["warnings"].size() == 1);
    CHECK(warned["warnings"][0] == "output 'y': cosine 0.500000, far from 1: the low graph "
                                   "computes something else");
  }
}
