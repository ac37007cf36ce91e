// The fields IR 9 to 13 added, read and fixed by field number (model/ir_fields.h). Messages
// are built as their bytes on the wire, as a writer of ONNX 1.23 would send them.
#include "model/ir_fields.h"
#include "npucc/error.h"
#include "test_support.h"

#include <doctest/doctest.h>
#include <string>

namespace {

std::string varint(uint64_t value) {
  std::string out;
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
  return out;
}

std::string field(int number, const std::string& payload) {
  return varint(static_cast<uint64_t>(number) << 3 | 2) + varint(payload.size()) + payload;
}

std::string varint_field(int number, uint64_t value) {
  return varint(static_cast<uint64_t>(number) << 3) + varint(value);
}

// A NodeDeviceConfigurationProto sharding each tensor over devices 0 and 1.
std::string configuration(const std::vector<std::string>& tensors) {
  std::string out = field(1, "two");
  for (const auto& tensor : tensors) {
    out += field(2, field(1, tensor) + varint_field(2, 0) + varint_field(2, 1));
  }
  return out + varint_field(3, 1);
}

// The tensor names of a node's sharding specs, in order.
std::vector<std::string> sharded(const onnx::NodeProto& node) {
  std::vector<std::string> names;
  const auto& fields = node.unknown_fields();
  for (int i = 0; i < fields.field_count(); ++i) {
    if (fields.field(i).number() != 10) {
      continue;
    }
    google::protobuf::UnknownFieldSet config;
    REQUIRE(config.ParseFromString(fields.field(i).length_delimited()));
    for (int j = 0; j < config.field_count(); ++j) {
      if (config.field(j).number() == 2) {
        google::protobuf::UnknownFieldSet spec;
        REQUIRE(spec.ParseFromString(config.field(j).length_delimited()));
        for (int k = 0; k < spec.field_count(); ++k) {
          if (spec.field(k).number() == 1) {
            names.push_back(spec.field(k).length_delimited());
          }
        }
      }
    }
  }
  return names;
}

} // namespace

TEST_SUITE("npucc::model::ir_fields") {
  TEST_CASE("overloads and attribute defaults are read from unknown fields") {
    onnx::NodeProto node;
    node.set_op_type("Scale");
    REQUIRE(node.MergeFromString(field(8, "double")));
    CHECK(npucc::model::overload_of(node) == "double");
    onnx::FunctionProto function;
    function.set_name("Scale");
    onnx::AttributeProto alpha;
    alpha.set_name("alpha");
    alpha.set_type(onnx::AttributeProto::FLOAT);
    alpha.set_f(2.5f);
    REQUIRE(function.MergeFromString(field(13, "double") + field(11, alpha.SerializeAsString())));
    CHECK(npucc::model::overload_of(function) == "double");
    auto defaults = npucc::model::attribute_defaults(function);
    REQUIRE(defaults.size() == 1);
    CHECK(defaults[0].f() == 2.5f);
    onnx::FunctionProto broken;
    REQUIRE(broken.MergeFromString(field(11, "\xff")));
    CHECK_THROWS_AS(npucc::model::attribute_defaults(broken), npucc::Error);
  }

  TEST_CASE("sharding specs follow the Casts put between a node and its tensors") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2,8] S, float[8,8] W) => (float[2,8] M) {
        S16 = Cast<to = 10>(S)
        W16 = Cast<to = 10>(W)
        M16 = MatMul(S16, W16)
        M = Cast<to = 1>(M16)
      }
    )");
    auto& node = *model.mutable_graph()->mutable_node(2);
    const std::string before = configuration({"S", "W", "M", "gone"});
    REQUIRE(node.MergeFromString(field(10, before)));
    CHECK(npucc::model::fix_device_configurations(*model.mutable_graph()) == 1);
    CHECK(sharded(node) == std::vector<std::string>{"S16", "W16", "M16"});
    // Nothing left to rename: the bytes stay as they are.
    std::string fixed = node.unknown_fields().field(0).length_delimited();
    CHECK(npucc::model::fix_device_configurations(*model.mutable_graph()) == 0);
    CHECK(node.unknown_fields().field(0).length_delimited() == fixed);
  }

  TEST_CASE("a body's node follows a Cast in the enclosing graph") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (bool c, float[2] x) => (float16[2] y) {
        x16 = Cast<to = 10>(x)
        y = If(c) <then_branch = t () => (float16[2] z) { z = Neg(x16) },
                   else_branch = e () => (float16[2] w) { w = Identity(x16) }>
      }
    )");
    auto* branch = model.mutable_graph()->mutable_node(1)->mutable_attribute(0)->mutable_g();
    auto& neg = *branch->mutable_node(0);
    REQUIRE(neg.MergeFromString(field(10, configuration({"x"}))));
    CHECK(npucc::model::fix_device_configurations(*model.mutable_graph()) == 0);
    CHECK(sharded(neg) == std::vector<std::string>{"x16"});
  }

  TEST_CASE("value_info metadata comes back to the same-named entry") {
    onnx::GraphProto from;
    auto* value = from.add_value_info();
    value->set_name("R");
    REQUIRE(value->MergeFromString(field(4, field(1, "k") + field(2, "v"))));
    onnx::GraphProto to;
    to.add_value_info()->set_name("other");
    to.add_value_info()->set_name("R");
    npucc::model::carry_value_info_fields(from, to);
    CHECK(to.value_info(0).unknown_fields().field_count() == 0);
    CHECK(to.value_info(1).SerializeAsString() == value->SerializeAsString());
  }
}
