#include "runtime/tensor.h"

#include "npucc/error.h"

#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

using namespace npucc::runtime;

TEST_SUITE("npucc::runtime::tensor") {
  TEST_CASE("sizes, counts and names") {
    CHECK(element_size(onnx::TensorProto::FLOAT) == 4);
    CHECK(element_size(onnx::TensorProto::BFLOAT16) == 2);
    CHECK(element_size(onnx::TensorProto::STRING) == 0);
    CHECK(element_size(22) == 0); // int4 (IR 9), packed: not carried
    CHECK(element_count({}) == 1);
    CHECK(element_count({2, 0, 3}) == 0);
    CHECK(element_count({2, 3}) == 6);
    CHECK(describe(onnx::TensorProto::FLOAT, {1, 3, 48, 192}) == "float32[1,3,48,192]");
    CHECK(describe(onnx::TensorProto::INT64, {}) == "int64[]");
    CHECK(is_float_type(onnx::TensorProto::FLOAT16));
    CHECK_FALSE(is_float_type(onnx::TensorProto::INT32));
  }

  TEST_CASE("tensor sets survive the wire, any bytes and empty shapes included") {
    std::vector<TensorSet> sets = {
        {{"x", onnx::TensorProto::FLOAT, {1, 2}, std::string("\0\1\2\3\4\5\6\7", 8)},
         {"", onnx::TensorProto::INT64, {}, std::string(8, '\xff')}},
        {},
        {{"e", onnx::TensorProto::FLOAT, {0, 4}, ""}},
    };
    auto back = decode_sets(encode_sets(sets));
    REQUIRE(back.size() == 3);
    CHECK(back[0][0].name == "x");
    CHECK(back[0][0].shape == std::vector<int64_t>{1, 2});
    CHECK(back[0][0].bytes == sets[0][0].bytes);
    CHECK(back[0][1].shape.empty());
    CHECK(back[0][1].type == onnx::TensorProto::INT64);
    CHECK(back[1].empty());
    CHECK(back[2][0].shape == std::vector<int64_t>{0, 4});
  }

  TEST_CASE("a damaged message is an error, not a crash") {
    std::string wire = encode_sets({{{"x", 1, {2}, std::string(8, 'a')}}});
    CHECK_THROWS_AS(decode_sets(wire.substr(0, wire.size() - 3)), npucc::Error);
    CHECK_THROWS_AS(decode_sets(wire + "1:x"), npucc::Error);
    CHECK_THROWS_AS(decode_sets("1:z"), npucc::Error);
  }
}
