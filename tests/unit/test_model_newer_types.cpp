// The element types of IR 9 to 13: sizes (model/tensor_info.h) and how the reader takes
// their tensors (model/newer_types.h).
#include "model/tensor_info.h"
#include "npucc/error.h"
#include "npucc/model.h"
#include "test_support.h"

#include <doctest/doctest.h>
#include <string>

namespace {

using npucc::model::bytes_for;

// y = Cast(w) with `w` an initializer of `type` and `count` elements, filled by `fill`.
template <typename Fill> std::string cast_model(int32_t type, int64_t count, Fill fill) {
  auto model = npucc::test::parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g () => (float[N] y) { y = Cast<to = 1>(w) }
  )");
  model.set_ir_version(13);
  auto* w = model.mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(type);
  w->add_dims(count);
  fill(*w);
  return model.SerializeAsString();
}

std::string error_of(const std::string& bytes) {
  try {
    npucc::parse_model(bytes, "m.onnx", {});
  } catch (const npucc::Error& e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_SUITE("npucc::model::newer_types") {
  TEST_CASE("packed types take two or four elements a byte, rounded up") {
    CHECK(npucc::model::dtype_name(npucc::model::k_float8e4m3fnuz) == "float8e4m3fnuz");
    CHECK(npucc::model::dtype_name(npucc::model::k_int2) == "int2");
    CHECK(npucc::model::dtype_name(27) == "type 27");
    CHECK(*bytes_for(npucc::model::k_float8e5m2, 7) == 7);
    CHECK(*bytes_for(npucc::model::k_float8e8m0, 7) == 7);
    CHECK(*bytes_for(npucc::model::k_int4, 7) == 4);
    CHECK(*bytes_for(npucc::model::k_float4e2m1, 8) == 4);
    CHECK(*bytes_for(npucc::model::k_uint2, 9) == 3);
    CHECK(*bytes_for(npucc::model::k_int2, 0) == 0);
    CHECK(*bytes_for(onnx::TensorProto::FLOAT, 3) == 12);
    // No overflow from multiplying by the bits first.
    CHECK(*bytes_for(npucc::model::k_uint4, UINT64_MAX) == UINT64_MAX / 2 + 1);
    CHECK_FALSE(bytes_for(onnx::TensorProto::DOUBLE, UINT64_MAX).has_value());
    CHECK(npucc::model::element_bits(npucc::model::k_uint4) == 4);
    CHECK(npucc::model::element_bits(onnx::TensorProto::STRING) == 0);
    CHECK_FALSE(npucc::model::is_known_type(27));
  }

  TEST_CASE("int32_data of a newer type becomes raw_data, byte for byte") {
    auto bytes = cast_model(npucc::model::k_int4, 5, [](onnx::TensorProto& w) {
      for (int32_t value : {0x21, 0xf3, 0x07}) {
        w.add_int32_data(value);
      }
    });
    auto model = npucc::parse_model(bytes, "m.onnx", {});
    const auto& w = model.proto.graph().initializer(0);
    CHECK(w.int32_data_size() == 0);
    CHECK(w.raw_data() == std::string("\x21\xf3\x07", 3));
  }

  TEST_CASE("what would be misread is refused, naming the tensor and the type") {
    auto wide = cast_model(npucc::model::k_float8e4m3fn, 2, [](onnx::TensorProto& w) {
      w.add_int32_data(0x40);
      w.add_int32_data(0x140);
    });
    CHECK(error_of(wide).find("tensor \"w\" of type float8e4m3fn has int32_data value 320") !=
          std::string::npos);
    auto floats =
        cast_model(npucc::model::k_uint2, 4, [](onnx::TensorProto& w) { w.add_float_data(1.0f); });
    CHECK(error_of(floats).find("of type uint2 stores its values in float_data") !=
          std::string::npos);
    // 5 int4 values need 3 bytes: 2 is short, 4 is long.
    for (int stored : {2, 4}) {
      auto sized = cast_model(npucc::model::k_int4, 5, [&](onnx::TensorProto& w) {
        w.set_raw_data(std::string(static_cast<size_t>(stored), '\0'));
      });
      CHECK(error_of(sized).find("of type int4 declares 3 bytes of data but holds " +
                                 std::to_string(stored)) != std::string::npos);
    }
    auto unknown = cast_model(27, 1, [](onnx::TensorProto& w) { w.set_raw_data("x"); });
    CHECK(error_of(unknown).find("invalid data type 27") != std::string::npos);
  }

  TEST_CASE("tensors in model-local functions are taken the same way") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17, "local" : 1]>
      g () => (float[N] y) { y = local.F() }
      <domain: "local", opset_import: ["" : 17]>
      F () => (y) {
        c = Constant<value = int64[1] {1}>()
        y = Cast<to = 1>(c)
      }
    )");
    model.set_ir_version(13);
    auto* value = model.mutable_functions(0)->mutable_node(0)->mutable_attribute(0)->mutable_t();
    value->clear_int64_data();
    value->set_data_type(npucc::model::k_uint4);
    value->add_int32_data(0x5a);
    value->set_dims(0, 2);
    auto read = npucc::parse_model(model.SerializeAsString(), "m.onnx", {});
    CHECK(read.proto.functions(0).node(0).attribute(0).t().raw_data() == "\x5a");
    value->set_int32_data(0, -1);
    CHECK(error_of(model.SerializeAsString()).find("int32_data value -1") != std::string::npos);
  }
}
