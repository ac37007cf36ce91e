#include "accuracy/target.h"

#include "npucc/error.h"

#include <doctest/doctest.h>
#include <string>

using namespace npucc;
using namespace npucc::accuracy;

namespace {

OutputMetrics metrics(double cosine, int64_t nonfinite, double abs_error = 0) {
  OutputMetrics out;
  out.name = "y";
  out.cosine = cosine;
  out.nonfinite = nonfinite;
  out.max_abs_error = abs_error;
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
  CHECK(refusal({"cosine=0.9"}).find("is not METRIC>=VALUE") != std::string::npos);
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
  CHECK(shortfall(target, {metrics(0.999, 0)}) < shortfall(target, {metrics(0.99, 0)}));
  CHECK(shortfall(target, {metrics(0.5, 0)}) < shortfall(target, {metrics(1, 1)}));
  CHECK_FALSE(shortfall(target, {metrics(0.99, 0)}) < shortfall(target, {metrics(0.99, 0)}));
}
