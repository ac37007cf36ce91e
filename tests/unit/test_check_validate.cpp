#include "check/validate.h"
#include "npucc/error.h"
#include "test_support.h"

#include <doctest/doctest.h>
#include <poll.h>
#include <string>
#include <unistd.h>

namespace {

// ONNX 1.12's ConvTranspose inference reads the weight's dims past its rank: a SIGSEGV
// inside the isolated child, which the checker does not foresee.
const char* k_crashing_model = R"(
  <ir_version: 8, opset_import: ["" : 17]>
  g (float[1,1,4,4] x, float[1] w) => (float[1,1,4,4] y) {
    y = ConvTranspose(x, w)
  }
)";

} // namespace

TEST_SUITE("npucc::check::validate") {
  TEST_CASE("ONNX crashing in the isolated child is one error line, not a crash") {
    // The child resets the fatal-signal handlers it inherits from doctest: no "test case
    // CRASHED" report is printed for it (look at this test's output), and the parent
    // turns its death into the error below.
    auto model = npucc::test::parse_text_model(k_crashing_model);
    npucc::check::check_model(model);
    std::string message;
    try {
      npucc::check::infer_shapes_strict(model);
    } catch (const npucc::Error& e) {
      message = e.what();
    }
    CHECK(message.rfind("shape inference: ONNX crashed on this model (signal ", 0) == 0);
    CHECK(message.find('\n') == std::string::npos);
  }

  TEST_CASE("the ONNX worker serves requests after a crash and holds none of the host's files") {
    auto crashing = npucc::test::parse_text_model(k_crashing_model);
    CHECK_THROWS_AS(npucc::check::infer_shapes_strict(crashing), npucc::check::InferenceCrash);

    // A pipe opened by the host before the next worker is forked: once the host closes
    // its write end, the reader sees end-of-file only if the worker holds no copy.
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2,3] x) => (y) {
        y = Relu(x)
      }
    )");
    npucc::check::infer_shapes_strict(model); // forks a new worker
    REQUIRE(model.graph().output(0).type().tensor_type().shape().dim_size() == 2);
    ::close(fds[1]);
    pollfd reader{fds[0], POLLIN, 0};
    REQUIRE(::poll(&reader, 1, 5000) == 1);
    char byte = 0;
    CHECK(::read(fds[0], &byte, 1) == 0);
    ::close(fds[0]);

    // Large raw data stays in this process and comes back in place.
    auto* big = model.mutable_graph()->add_initializer();
    big->set_name("big");
    big->set_data_type(onnx::TensorProto::FLOAT);
    big->add_dims(65536);
    big->set_raw_data(std::string(65536 * sizeof(float), '\1'));
    npucc::check::check_model(model);
    npucc::check::infer_shapes_strict(model);
    CHECK(model.graph().initializer(0).raw_data() == std::string(65536 * sizeof(float), '\1'));
    CHECK_FALSE(model.graph().initializer(0).has_data_location());
    CHECK(model.graph().initializer(0).external_data_size() == 0);
  }
}
