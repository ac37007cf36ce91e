#include "accuracy/drift_report.h"

#include <cmath>
#include <cstring>
#include <doctest/doctest.h>
#include <limits>
#include <onnx/onnx_pb.h>

using namespace npucc;
using npucc::runtime::Tensor;

namespace {

Tensor drift_floats(const std::vector<float>& values) {
  Tensor tensor{"v", onnx::TensorProto::FLOAT, {static_cast<int64_t>(values.size())},
                std::string(values.size() * 4, '\0')};
  std::memcpy(tensor.bytes.data(), values.data(), tensor.bytes.size());
  return tensor;
}

accuracy::DriftValue drift_value(int64_t order, std::vector<size_t> inputs) {
  accuracy::DriftValue value;
  value.order = order;
  value.node = "n" + std::to_string(order);
  value.op_type = "Conv";
  value.value = "v" + std::to_string(order);
  value.stored = "float16";
  value.inputs = std::move(inputs);
  return value;
}

} // namespace

TEST_SUITE("npucc::accuracy::drift_report") {
  const std::vector<float> k_high = {1, 2, 3, 4, 5, 6, 7, 1e-9f};

  TEST_CASE("figures of one value over two sets: the worst cosine, shares over all elements") {
    accuracy::DriftFigures f;
    accuracy::fold_drift(f, drift_floats(k_high), drift_floats(k_high));
    std::vector<float> low = k_high;
    low[0] = 1.5f;
    low[7] = 0; // flushed
    accuracy::fold_drift(f, drift_floats(k_high), drift_floats(low));
    CHECK(f.elements == 8);
    CHECK(f.total == 16);
    CHECK(f.flushed == 1);
    CHECK(f.overflowed == 0);
    CHECK(f.max_abs_error == doctest::Approx(0.5));
    CHECK(f.cosine < 1);
    CHECK(f.cosine > 0.99);
    CHECK(f.high_max_abs == 7);
    CHECK(f.high_min_nonzero_abs == doctest::Approx(1e-9));
    CHECK(f.cosine_undefined.empty());
  }

  TEST_CASE("two equal values: cosine 1, never above (sqrt(3)^2 < 3 in doubles)") {
    accuracy::DriftFigures f;
    const std::vector<float> ones = {1, 1, 1, 0, 0, 0, 0, 0};
    accuracy::fold_drift(f, drift_floats(ones), drift_floats(ones));
    CHECK(f.cosine == 1.0);
    const auto report = accuracy::drift_json({drift_value(0, {})}, {f}, {"float16", 1, 2, 0.9999});
    CHECK(report["values"][0]["added_drift"].get<double>() == 0.0);
  }

  TEST_CASE("a body value's sets: compared, empty in both runs, or of different shapes") {
    accuracy::DriftFigures f;
    Tensor empty = drift_floats({});
    empty.shape = {0};
    CHECK_FALSE(accuracy::body_set_comparable(f, empty, empty));
    CHECK_FALSE(accuracy::body_set_comparable(f, drift_floats(k_high), empty));
    CHECK_FALSE(accuracy::body_set_comparable(f, drift_floats(k_high), drift_floats({1, 2})));
    CHECK(accuracy::body_set_comparable(f, drift_floats(k_high), drift_floats(k_high)));
    CHECK(f.sets_empty == 1);
    CHECK(f.sets_differing == 2);
    auto value = drift_value(3, {});
    value.body = {{"y", "choose", "If", "then_branch"}};
    value.graph = accuracy::body_graph_name(value.body);
    const auto report = accuracy::drift_json({value}, {f}, {"float16", 3, 2, 0.9999});
    const auto& entry = report["values"][0];
    CHECK(entry["graph"] == "main/choose:then_branch");
    CHECK(entry["body"]["sets_compared"] == 0);
    CHECK(entry["body"]["sets_empty"] == 1);
    CHECK(entry["body"]["stacked_axes"] == 0);
    CHECK(entry["cosine"].is_null());
    CHECK(entry["cosine_undefined"].get<std::string>().find("no sample set gave this body value") == 0);
  }

  TEST_CASE("an overflow leaves no cosine, counts, and is a crossing with drift 1") {
    accuracy::DriftFigures f;
    std::vector<float> low = k_high;
    low[6] = std::numeric_limits<float>::infinity();
    accuracy::fold_drift(f, drift_floats(k_high), drift_floats(low));
    CHECK(std::isnan(f.cosine));
    CHECK_FALSE(f.cosine_undefined.empty());
    CHECK(f.overflowed == 1);
    const auto report = accuracy::drift_json({drift_value(0, {})}, {f}, {"float16", 1, 2, 0.9999});
    CHECK(report.at("first_crossing") == 0);
    CHECK(report.at("values")[0].at("cosine").is_null());
    CHECK(report.at("values")[0].at("overflow_share") == doctest::Approx(0.125));
    CHECK(report.at("values")[0].at("added_drift") == doctest::Approx(1 / accuracy::k_drift_floor));
  }

  TEST_CASE("the first crossing in order, and the offender that adds drift, not the one that "
            "inherits it") {
    std::vector<accuracy::DriftFigures> f(3);
    f[0].cosine = 0.99999;  // above the threshold
    f[1].cosine = 0.99;     // crosses: drift 1e-2 from 1e-5 (x1000)
    f[2].cosine = 0.97;     // inherits: 3e-2 from 1e-2 (x3)
    const auto report = accuracy::drift_json(
        {drift_value(0, {}), drift_value(1, {0}), drift_value(2, {1})}, f, {"float16", 1, 2, 0.9999});
    CHECK(report.at("first_crossing") == 1);
    CHECK(report.at("top_offenders") == nlohmann::json::array({1, 0, 2}));
    CHECK(report.at("values")[1].at("added_drift") == doctest::Approx(1000).epsilon(1e-6));
    const auto lines = accuracy::format_drift(report);
    REQUIRE(lines.size() >= 3);
    CHECK(lines[0].find("first below cosine 0.9999: #1 Conv 'n1' (value 'v1')") != std::string::npos);
  }

  TEST_CASE("no crossing: null, said so") {
    std::vector<accuracy::DriftFigures> f(1);
    f[0].cosine = 1;
    const auto report = accuracy::drift_json({drift_value(0, {})}, f, {"bfloat16", 1, 2, 0.9999});
    CHECK(report.at("first_crossing").is_null());
    CHECK(accuracy::format_drift(report)[0].find("no value below cosine 0.9999") != std::string::npos);
  }
}
