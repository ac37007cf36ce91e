#include "accuracy/target.h"

#include "npucc/error.h"

#include <cmath>
#include <doctest/doctest.h>
#include <string>

using namespace npucc;
using namespace npucc::accuracy;

namespace {

// One sample of output NAME (16 elements) with these figures.
OutputMetrics metrics(double cosine, int64_t nonfinite, double abs_error = 0,
                      const std::string& name = "y") {
  SampleMetrics sample;
  sample.size = sample.elements = 16;
  sample.classes = 4;
  sample.nonfinite = nonfinite;
  sample.max_abs_error = abs_error;
  sample.figures["cosine"] = {cosine, {}};
  sample.figures["top1"] = {0.75, {}};
  sample.figures["psnr"] = {40, {}};
  OutputMetrics out;
  out.name = name;
  merge(out, sample);
  return out;
}

OutputMetrics undefined_cosine(int64_t size) {
  OutputMetrics out = metrics(1, 0);
  out.samples[0].size = size;
  out.samples[0].figures["cosine"] = {0, "too few"};
  return out;
}

std::string refusal(const std::vector<std::string>& clauses) {
  try {
    parse_accuracy_target(clauses);
  } catch (const Error& e) {
    return e.what();
  }
  return "accepted";
}

} // namespace

TEST_CASE("accuracy targets: comma-joined and repeated clauses give one canonical text") {
  CHECK(target_text(parse_accuracy_target({"nonfinite<=0, cosine>=0.99950"})) ==
        "cosine>=0.9995,nonfinite<=0");
  CHECK(target_text(parse_accuracy_target({"cosine>=0.9995", "nonfinite<=0"})) ==
        "cosine>=0.9995,nonfinite<=0");
  CHECK(target_text(parse_accuracy_target({"cosine>=0.9", "cosine>=0.99"})) == "cosine>=0.99");
  CHECK(target_text(parse_accuracy_target({"max_abs_error<=0.5,max_rel_error<=2"})) ==
        "max_abs_error<=0.5,max_rel_error<=2");
  CHECK(parse_accuracy_target({}).empty());
}

TEST_CASE("accuracy targets: a bad clause is refused naming it") {
  CHECK(refusal({"cosin>=0.9"}).find("unknown metric \"cosin\"") != std::string::npos);
  CHECK(refusal({"cosine>=abc"}).find("\"abc\" is not a number") != std::string::npos);
  CHECK(refusal({"cosine<=0.9"}).find("cosine takes >=") != std::string::npos);
  CHECK(refusal({"cosine>=1.5"}).find("cosine takes >=") != std::string::npos);
  CHECK(refusal({"nonfinite<=1.5"}).find("nonfinite takes <=") != std::string::npos);
  CHECK(refusal({"cosine=0.9"}).find("is not [OUTPUT:]METRIC>=VALUE") != std::string::npos);
  CHECK(refusal({"cosine>=0.9,"}).find("empty clause") != std::string::npos);
  CHECK(refusal({"cosine>=nan"}).find("is not a number") != std::string::npos);
}

TEST_CASE("accuracy targets: every output must meet every bound") {
  const auto target = parse_accuracy_target({"cosine>=0.999,nonfinite<=0"});
  CHECK(meets(target, {metrics(0.9995, 0)}));
  CHECK(meets(target, {metrics(0.999, 0)}));
  CHECK_FALSE(meets(target, {metrics(0.9995, 0), metrics(0.99, 0)}));
  CHECK_FALSE(meets(target, {metrics(1, 1)}));
  CHECK_FALSE(meets(parse_accuracy_target({"max_abs_error<=0.1"}), {metrics(1, 0, 0.2)}));
  CHECK(meets(parse_accuracy_target({"max_abs_error<=0.1"}), {metrics(0.5, 0, 0.1)}));
  // Errors are over finite values: a non-finite one is an infinite error.
  CHECK_FALSE(meets(parse_accuracy_target({"max_abs_error<=0.1"}), {metrics(1, 3, 0)}));
}

TEST_CASE("accuracy targets: the shortfall ranks non-finite values before the cosine") {
  const auto target = parse_accuracy_target({"cosine>=0.999"});
  const auto allow = allowances(target, {metrics(1, 0)});
  auto less = [&](const OutputMetrics& a, const OutputMetrics& b) {
    return less_short(shortfall(target, {a}), shortfall(target, {b}), allow);
  };
  CHECK(less(metrics(0.999, 0), metrics(0.99, 0)));
  CHECK(less(metrics(0.5, 0), metrics(1, 1)));
  CHECK_FALSE(less(metrics(0.99, 0), metrics(0.99, 0)));
}

TEST_CASE("accuracy targets: per output, task metrics, tolerances") {
  CHECK(target_text(parse_accuracy_target(
            {"logits:0:top1>=0.99, psnr>=30,close[rtol=1e-2, atol=0.001]>=0.999,iou@0.30>=0.9"})) ==
        "iou@0.3>=0.9,psnr>=30,close[atol=0.001,rtol=0.01]>=0.999,logits:0:top1>=0.99");
  const auto target = parse_accuracy_target({"y:top1>=0.75,psnr>=40"});
  CHECK(meets(target, {metrics(0.5, 0), metrics(0.5, 0, 0, "z")}));
  CHECK_FALSE(meets(parse_accuracy_target({"y:top1>=0.8"}), {metrics(1, 0)}));
  // Only the output named: z's top1 of 0.75 is not judged by y's bound.
  CHECK(meets(parse_accuracy_target({"y:cosine>=0.9"}), {metrics(0.95, 0), metrics(0.1, 0, 0, "z")}));
  const auto requests = figure_requests(parse_accuracy_target({"iou@0.5>=0.9,close[atol=1]>=1"}));
  CHECK(requests.iou_thresholds == std::vector<double>{0.5});
  CHECK(requests.tolerances == std::vector<std::pair<double, double>>{{1, 0}});
  CHECK(refusal({"top1>=2"}).find("share from 0 to 1") != std::string::npos);
  CHECK(refusal({"close[btol=1]>=1"}).find("close takes [atol=A,rtol=R]") != std::string::npos);
  CHECK(refusal({":cosine>=0.9"}).find("no output name") != std::string::npos);
}

TEST_CASE("accuracy targets: an undefined figure never meets a bound") {
  OutputMetrics broken = metrics(1, 0);
  broken.samples[0].figures["cosine"] = {1, "the high output holds 3 non-finite values"};
  CHECK_FALSE(meets(parse_accuracy_target({"cosine>=0.5"}), {broken}));
  CHECK_FALSE(meets(parse_accuracy_target({"y:cosine>=0.5"}), {undefined_cosine(1)}));
  // Nothing compared: an error bound is not met by an error of 0.
  OutputMetrics nothing = metrics(1, 0);
  nothing.samples[0].elements = 0;
  CHECK_FALSE(meets(parse_accuracy_target({"max_abs_error<=1"}), {nothing}));
}

TEST_CASE("accuracy targets: an output too small for a cosine is judged by its errors") {
  const auto tiny = undefined_cosine(1);
  // Every-output cosine skips it...
  CHECK(meets(parse_accuracy_target({"cosine>=0.99,max_abs_error<=0.1"}), {metrics(1, 0), tiny}));
  // ...but only with an error bound for it; without one the target cannot judge it.
  CHECK_THROWS_WITH_AS(check_judgeable(parse_accuracy_target({"cosine>=0.99"}), {metrics(1, 0), tiny}),
                       doctest::Contains("too few for a cosine"), Error);
  CHECK_NOTHROW(check_judgeable(parse_accuracy_target({"cosine>=0.99,y:max_abs_error<=1"}), {tiny}));
  // A figure the high graph alone leaves undefined can never be met: said before a repair.
  OutputMetrics zero = metrics(1, 0);
  zero.samples[0].figures["cosine"] = {0, "the high output is all zero (a zero-norm reference)"};
  CHECK_THROWS_WITH_AS(check_judgeable(parse_accuracy_target({"cosine>=0.99"}), {zero}),
                       doctest::Contains("zero-norm reference), whatever the low graph computes"), Error);
  CHECK_THROWS_WITH_AS(check_judgeable(parse_accuracy_target({"w:cosine>=0.99"}), {zero}),
                       doctest::Contains("no output 'w'"), Error);
}

namespace {

// A caller's function's entry (OutputMetrics::function) with these values per set.
OutputMetrics function_entry(const std::string& metric, std::vector<double> values) {
  OutputMetrics out;
  out.name = metric;
  out.function = true;
  for (size_t s = 0; s < values.size(); ++s) {
    SampleMetrics sample;
    sample.set = static_cast<int64_t>(s);
    sample.figures[metric] = {values[s], {}};
    merge(out, sample);
  }
  return out;
}

} // namespace

TEST_CASE("accuracy targets: a caller's function is its own clause, on every set") {
  const auto target = parse_accuracy_target({"score[wer-v2]<=0.05,cosine>=0.99,check[k]>=1"});
  CHECK(target_text(target) == "cosine>=0.99,check[k]>=1,score[wer-v2]<=0.05");
  CHECK(is_function_metric("score[wer-v2]"));
  CHECK(function_label("check[k]") == "k");
  const OutputMetrics y = metrics(0.995, 0);
  // Every-output clauses skip the functions' entries, and a function's clause the outputs.
  CHECK(meets(target, {y, function_entry("check[k]", {1, 1}),
                       function_entry("score[wer-v2]", {0.01, 0.05})}));
  CHECK_FALSE(meets(target, {y, function_entry("check[k]", {1, 0}),
                             function_entry("score[wer-v2]", {0.01, 0.05})}));
  CHECK_FALSE(meets(target, {y, function_entry("check[k]", {1, 1}),
                             function_entry("score[wer-v2]", {0.01, 0.06})}));
  CHECK_FALSE(meets(target, {y, function_entry("check[k]", {1, 1}),
                             function_entry("score[wer-v2]", {0.01, std::nan("")})}));
  // The refusals: a check's bound, an OUTPUT: prefix, a label with a space.
  CHECK(refusal({"check[k]>=0.5"}).find("check[LABEL] takes >=1") != std::string::npos);
  CHECK(refusal({"y:score[k]>=0.5"}).find("no OUTPUT: before it") != std::string::npos);
  CHECK(refusal({"score[a b]>=0.5"}).find("LABEL without spaces") != std::string::npos);
}

TEST_CASE("accuracy targets: a function's best is its worst on the high outputs themselves") {
  auto target = parse_accuracy_target({"score[acc]>=0.9"});
  set_function_bests(target, {function_entry("score[acc]", {1.0, 0.98})});
  CHECK(target.clauses[0].best == 0.98);
  // The ranking counts from the best: 0.95 on a set is 0.03 short of it, of 0.08 allowed.
  const auto shortfalls = shortfall(target, {function_entry("score[acc]", {0.95, 0.97})});
  REQUIRE(shortfalls.badness.size() == 1);
  CHECK(shortfalls.badness[0] == doctest::Approx(0.03));
  CHECK(allowances(target, {function_entry("score[acc]", {0.95})})[0] == doctest::Approx(0.08));
  // A bound the high outputs already miss is refused before any repair.
  auto missed = parse_accuracy_target({"score[acc]>=0.99"});
  try {
    check_judgeable(missed, {function_entry("score[acc]", {1.0, 0.98})});
    FAIL("a bound the high outputs miss was accepted");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("on sample set 2 for the high graph's outputs") !=
          std::string::npos);
  }
}
