#include "runtime/runtime.h"

#include "npucc/error.h"
#include "test_support.h"

#include <cstring>
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

using namespace npucc;

#if !NPUCC_TEST_HAVE_ONNXRUNTIME

// Built without ONNX Runtime: starting it is refused in one line that says how to get it.
// CTest skips the two suites below in such a build (tests/cmake/unit_suites.cmake), so its
// summary says Skipped for them, never Passed.
TEST_SUITE("npucc::runtime::without_runtime") {
  TEST_CASE("starting ONNX Runtime is refused with the way to get it") {
    CHECK_THROWS_WITH_AS(runtime::start_runtime(),
                         doctest::Contains("--check-accuracy needs ONNX Runtime, and this npucc was "
                                           "built without it"),
                         Error);
  }
}

#else

// Built with ONNX Runtime: starting it must work. An error (a library that is missing or
// crashes while loading) fails these cases, never ends them as passed.

namespace {

// y = x + x, float32[2], or a graph ONNX Runtime refuses (an op it does not know).
std::string model_bytes(const char* op = "Add") {
  auto model = test::parse_text_model(std::string(R"(<ir_version: 8, opset_import: ["" : 17]>
    g (float[2] x) => (float[2] y) { y = )") + op + "(x, x) }");
  return model.SerializeAsString();
}

runtime::Tensor floats(const std::vector<float>& values) {
  runtime::Tensor tensor{"x", onnx::TensorProto::FLOAT, {static_cast<int64_t>(values.size())},
                         std::string(values.size() * 4, '\0')};
  std::memcpy(tensor.bytes.data(), values.data(), tensor.bytes.size());
  return tensor;
}

// A fold for the tests: per output, the sum of a * b over every element of every set, and the
// sets it saw; refuses outputs of different shapes, naming both graphs.
class ProductFold : public runtime::PairFold {
public:
  ProductFold(std::string a_what, std::string b_what)
      : m_a_what(std::move(a_what)), m_b_what(std::move(b_what)) {}
  void fold(const std::vector<runtime::TensorView>& a,
            const std::vector<runtime::TensorView>& b) override {
    m_sums.resize(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].shape != b[i].shape) {
        throw Error("'" + std::string(a[i].name) + "' differs in " + m_a_what + " and " + m_b_what);
      }
      std::vector<float> x(a[i].bytes.size() / 4), y(x.size());
      std::memcpy(x.data(), a[i].bytes.data(), a[i].bytes.size());
      std::memcpy(y.data(), b[i].bytes.data(), b[i].bytes.size());
      for (size_t e = 0; e < x.size(); ++e) {
        m_sums[i] += static_cast<double>(x[e]) * y[e];
      }
    }
    ++m_sets;
  }
  std::string result() override {
    std::string out = "sets " + std::to_string(m_sets);
    for (double sum : m_sums) {
      out += " " + std::to_string(sum);
    }
    return out;
  }

private:
  std::string m_a_what, m_b_what;
  std::vector<double> m_sums;
  int m_sets = 0;
};

std::unique_ptr<runtime::PairFold> make_product_fold(const std::string& a_what,
                                                     const std::string& b_what) {
  return std::make_unique<ProductFold>(a_what, b_what);
}

// Before main(): the runtime processes the cases fork find it.
const bool k_product_fold = runtime::register_pair_fold("test-products", make_product_fold);

} // namespace

TEST_SUITE("npucc::runtime::runtime_process") {
  TEST_CASE("runs a graph on each input set in ONNX Runtime's process") {
    std::unique_ptr<runtime::GraphRuntime> runtime = runtime::start_runtime();
    CHECK(runtime->version().rfind("ONNX Runtime 1.", 0) == 0);
    auto out = runtime->run("the test graph", model_bytes(), {{floats({1, 2})}, {floats({-3, 0.5})}},
                            {"y"});
    REQUIRE(out.size() == 2);
    REQUIRE(out[1].size() == 1);
    CHECK(out[0][0].name == "y");
    CHECK(out[0][0].shape == std::vector<int64_t>{2});
    float y[2];
    std::memcpy(y, out[1][0].bytes.data(), 8);
    CHECK(y[0] == -6.0f);
    CHECK(y[1] == 1.0f);
    // A refusal is one line naming the graph; the same process serves the next request.
    CHECK_THROWS_WITH_AS(runtime->run("the bad graph", model_bytes("NoSuchOp"), {{floats({1, 2})}},
                                      {"y"}),
                         doctest::Contains("the bad graph: ONNX Runtime: loading the graph:"), Error);
    CHECK(runtime->run("again", model_bytes(), {{floats({1, 1})}}, {"y"}).size() == 1);
    // Inputs that do not fit are the runtime's error too, not a crash.
    CHECK_THROWS_AS(runtime->run("short", model_bytes(), {{floats({1, 2, 3})}}, {"y"}), Error);
  }
}

TEST_SUITE("npucc::runtime::runtime_pool") {
  TEST_CASE("several processes share out the input sets and return them in order") {
    std::unique_ptr<runtime::GraphRuntime> pool = runtime::start_runtime(2);
    std::vector<runtime::TensorSet> inputs;
    for (float v : {1.0f, 2.0f, 3.0f}) {
      inputs.push_back({floats({v, -v})});
    }
    auto out = pool->run("the test graph", model_bytes(), inputs, {"y"});
    REQUIRE(out.size() == 3);
    for (size_t i = 0; i < out.size(); ++i) {
      float y[2];
      std::memcpy(y, out[i][0].bytes.data(), 8);
      CHECK(y[0] == 2.0f * static_cast<float>(i + 1));
      CHECK(y[1] == -2.0f * static_cast<float>(i + 1));
    }
    CHECK(pool->run("one set", model_bytes(), {inputs[0]}, {"y"}).size() == 1);
    CHECK_THROWS_WITH_AS(pool->run("the bad graph", model_bytes("NoSuchOp"), inputs, {"y"}),
                         doctest::Contains("the bad graph: ONNX Runtime"), Error);
  }

  TEST_CASE("run_each runs several graphs on every set, one graph per process, in order") {
    for (size_t processes : {1, 2}) {
      std::unique_ptr<runtime::GraphRuntime> pool = runtime::start_runtime(processes);
      const std::vector<runtime::TensorSet> inputs{{floats({1, -1})}, {floats({4, 0})}};
      auto out = pool->run_each({{"add", model_bytes("Add")}, {"mul", model_bytes("Mul")},
                                 {"sub", model_bytes("Sub")}},
                                inputs, {"y"});
      REQUIRE(out.size() == 3);
      const float expected[3][2][2] = {{{2, -2}, {8, 0}}, {{1, 1}, {16, 0}}, {{0, 0}, {0, 0}}};
      for (size_t g = 0; g < 3; ++g) {
        REQUIRE(out[g].size() == 2);
        for (size_t set = 0; set < 2; ++set) {
          float y[2];
          std::memcpy(y, out[g][set][0].bytes.data(), 8);
          CHECK(y[0] == expected[g][set][0]);
          CHECK(y[1] == expected[g][set][1]);
        }
      }
      CHECK_THROWS_WITH_AS(pool->run_each({{"good", model_bytes()}, {"the bad graph", model_bytes("NoSuchOp")}},
                                          inputs, {"y"}),
                           doctest::Contains("the bad graph: ONNX Runtime"), Error);
    }
  }

  TEST_CASE("run_folded folds two graphs' outputs inside the runtime process, as here") {
    REQUIRE(k_product_fold);
    const std::vector<runtime::TensorSet> inputs{{floats({1, -1})}, {floats({4, 0.5f})}};
    const runtime::GraphRuntime::Graph add{"the sum", model_bytes("Add")};
    const runtime::GraphRuntime::Graph mul{"the product", model_bytes("Mul")};
    // (2, -2) . (1, 1) + (8, 1) . (16, 0.25) = 0 + 128.25
    const std::string expected = "sets 2 " + std::to_string(128.25);
    for (size_t processes : {1, 2}) {
      std::unique_ptr<runtime::GraphRuntime> pool = runtime::start_runtime(processes);
      CHECK(pool->run_folded("test-products", add, mul, inputs, {"y"}) == expected);
      // The default, which copies the values across and folds here, agrees.
      CHECK(pool->GraphRuntime::run_folded("test-products", add, mul, inputs, {"y"}) == expected);
      CHECK_THROWS_WITH_AS(pool->run_folded("no-such-fold", add, mul, inputs, {"y"}),
                           doctest::Contains("no fold named 'no-such-fold'"), Error);
      CHECK_THROWS_WITH_AS(
          pool->run_folded("test-products", add, {"the bad graph", model_bytes("NoSuchOp")},
                           inputs, {"y"}),
          doctest::Contains("the bad graph: ONNX Runtime: loading the graph:"), Error);
      // The same process serves the next request.
      CHECK(pool->run_folded("test-products", add, mul, {inputs[1]}, {"y"}) ==
            "sets 1 " + std::to_string(128.25));
    }
  }

  TEST_CASE("a fold's error inside the runtime process is one line naming the graphs") {
    auto reduce = test::parse_text_model(R"(<ir_version: 8, opset_import: ["" : 17]>
      g (float[2] x) => (float[1] y) { axes = Constant<value = int64[1] {0}>()
                                       y = ReduceSum<keepdims = 1>(x, axes) })");
    std::unique_ptr<runtime::GraphRuntime> runtime = runtime::start_runtime();
    CHECK_THROWS_WITH_AS(runtime->run_folded("test-products", {"the sum", model_bytes("Add")},
                                             {"the reduction", reduce.SerializeAsString()},
                                             {{floats({1, 2})}}, {"y"}),
                         doctest::Contains("'y' differs in the sum and the reduction"), Error);
    CHECK(runtime->run("again", model_bytes(), {{floats({1, 1})}}, {"y"}).size() == 1);
  }
}

#endif // NPUCC_TEST_HAVE_ONNXRUNTIME
