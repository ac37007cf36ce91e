#include "compiler/validate.h"
#include "npucc/error.h"
#include "test_support.h"

#include <doctest/doctest.h>
#include <string>

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

TEST_SUITE("npucc::validate") {
  TEST_CASE("ONNX crashing in the isolated child is one error line, not a crash") {
    // The child resets the fatal-signal handlers it inherits from doctest: no "test case
    // CRASHED" report is printed for it (look at this test's output), and the parent
    // turns its death into the error below.
    auto model = npucc::test::parse_text_model(k_crashing_model);
    npucc::compiler::check_model(model);
    std::string message;
    try {
      npucc::compiler::infer_shapes_strict(model);
    } catch (const npucc::Error& e) {
      message = e.what();
    }
    CHECK(message.rfind("shape inference: ONNX crashed on this model (signal ", 0) == 0);
    CHECK(message.find('\n') == std::string::npos);
  }
}
