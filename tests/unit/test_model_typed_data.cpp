#include "model/weight_store.h"
#include "model/wire_source.h"
#include "npucc/error.h"
#include "npucc/model.h"
#include "test_support.h"
#include "util/file_io.h"

#include <cstring>
#include <doctest/doctest.h>
#include <string>
#include <vector>

// Typed fields (float_data, int32_data, int64_data, double_data, uint64_data) read as the
// raw bytes they stand for (model/typed_data.h), written by hand on the wire: packed or
// one value per field, as exporters do.
namespace {

namespace fs = std::filesystem;
using npucc::test::read_error;
using onnx::TensorProto;

constexpr int k_count = 6000; // values: past the 16 KiB table threshold in every encoding

std::string varint(uint64_t value) {
  std::string out;
  npucc::model::put_varint(out, value);
  return out;
}

std::string length_delimited(uint32_t field, const std::string& bytes) {
  return varint(uint64_t{field} << 3 | 2) + varint(bytes.size()) + bytes;
}

std::string little_endian(uint64_t value, size_t bytes) {
  std::string out;
  for (size_t i = 0; i < bytes; ++i) {
    out.push_back(static_cast<char>(value >> (8 * i)));
  }
  return out;
}

// A tensor's values on the wire, and the raw bytes they must read as.
struct Encoded {
  std::string wire;
  std::string raw;
};

// Varint values of `field`, packed or one field each; each value's raw bytes are its low
// `raw_bytes` bytes.
Encoded varints(uint32_t field, const std::vector<int64_t>& values, size_t raw_bytes, bool packed) {
  Encoded out;
  std::string body;
  for (int64_t value : values) {
    auto bits = static_cast<uint64_t>(value);
    (packed ? body : out.wire) += (packed ? "" : varint(uint64_t{field} << 3)) + varint(bits);
    out.raw += little_endian(bits, raw_bytes);
  }
  if (packed) {
    out.wire = length_delimited(field, body);
  }
  return out;
}

// Fixed-size values (float_data: 4 bytes, wire type 5; double_data: 8, wire type 1), one
// field each, or packed in `chunks` fields.
Encoded fixeds(uint32_t field, size_t size, int chunks_or_unpacked) {
  Encoded out;
  std::string chunk;
  for (int i = 0; i < k_count; ++i) {
    std::string value = little_endian(0x3f800000u + static_cast<uint64_t>(i) * 977u, size);
    out.raw += value;
    if (chunks_or_unpacked == 0) {
      out.wire += varint(uint64_t{field} << 3 | (size == 4 ? 5 : 1)) + value;
      continue;
    }
    chunk += value;
    if ((i + 1) % (k_count / chunks_or_unpacked) == 0) {
      out.wire += length_delimited(field, chunk);
      chunk.clear();
    }
  }
  return out;
}

// A model (an Identity of its one initializer, "t") whose initializer holds `values`.
std::string model_with(int32_t data_type, const std::vector<int64_t>& dims,
                       const std::string& values) {
  TensorProto head;
  head.set_name("t");
  head.set_data_type(data_type);
  for (int64_t dim : dims) {
    head.add_dims(dim);
  }
  auto model = npucc::test::parse_text_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g () => (y) { y = Identity(t) }
  )");
  // A second graph field merges into the first: the initializer joins the graph.
  return model.SerializeAsString() +
         length_delimited(7, length_delimited(5, head.SerializeAsString() + values));
}

fs::path write_model(const std::string& bytes) {
  fs::path path = npucc::test::temp_dir("typed") / "m.onnx";
  npucc::util::write_file_atomic(path, bytes);
  return path;
}

// Reads `bytes` as compile does: the tensor must be a table reference holding `raw`.
void check_decoded(const std::string& bytes, const std::string& raw) {
  fs::path path = write_model(bytes);
  npucc::Model model = npucc::read_model(path, {}, npucc::Weights::in_table);
  const TensorProto& tensor = model.proto.graph().initializer(0);
  REQUIRE(npucc::model::is_stored(tensor));
  REQUIRE(npucc::model::typed_slice(tensor)); // decoded when read, not parsed
  CHECK(npucc::model::stored_size(tensor) == raw.size());
  std::string streamed;
  npucc::model::decode_typed_slice(*npucc::model::typed_slice(tensor), [&](std::string_view block) {
    streamed += block;
    return true;
  });
  CHECK(streamed == raw);
  CHECK(*npucc::model::raw_bytes(tensor) == raw); // decoded into memory on demand
  npucc::Model parsed = npucc::read_model(path, {}, npucc::Weights::in_proto);
  CHECK(parsed.proto.graph().initializer(0).dims_size() == tensor.dims_size());
}

std::vector<int64_t> wide_values() {
  std::vector<int64_t> values;
  for (int i = 0; i < k_count; ++i) {
    values.push_back((i % 3 == 0 ? -1 : 1) * (int64_t{i} << (i % 50)));
  }
  return values;
}

} // namespace

TEST_SUITE("npucc::model::typed_data") {
  TEST_CASE("typed fields read as the raw bytes a full parse's values are") {
    std::vector<int64_t> values = wide_values();
    const int64_t count = k_count;
    SUBCASE("int64_data, packed (negative values take ten bytes)") {
      Encoded e = varints(7, values, 8, true);
      check_decoded(model_with(TensorProto::INT64, {count}, e.wire), e.raw);
    }
    SUBCASE("int64_data, one value per field") {
      Encoded e = varints(7, values, 8, false);
      check_decoded(model_with(TensorProto::INT64, {2, count / 2}, e.wire), e.raw);
    }
    SUBCASE("uint64_data of uint32 and uint64") {
      std::vector<int64_t> small;
      for (int i = 0; i < k_count; ++i) {
        small.push_back(int64_t{i} * 65537);
      }
      Encoded e32 = varints(11, small, 4, true);
      check_decoded(model_with(TensorProto::UINT32, {count}, e32.wire), e32.raw);
      Encoded e64 = varints(11, values, 8, true);
      check_decoded(model_with(TensorProto::UINT64, {count}, e64.wire), e64.raw);
    }
    SUBCASE("int32_data of int8, float16 and int32") {
      std::vector<int64_t> bytes;
      std::vector<int64_t> halves;
      for (int i = 0; i < k_count * 3; ++i) {
        bytes.push_back(i % 256 - 128);
        halves.push_back((i * 7) % 65536);
      }
      Encoded e8 = varints(5, bytes, 1, true);
      check_decoded(model_with(TensorProto::INT8, {count * 3}, e8.wire), e8.raw);
      Encoded e16 = varints(5, halves, 2, true);
      check_decoded(model_with(TensorProto::FLOAT16, {count * 3}, e16.wire), e16.raw);
      Encoded e32 = varints(5, bytes, 4, false);
      check_decoded(model_with(TensorProto::INT32, {count * 3}, e32.wire), e32.raw);
    }
    SUBCASE("int32_data of bool: any non-zero value is true") {
      std::vector<int64_t> flags;
      std::string raw;
      for (int i = 0; i < k_count * 3; ++i) {
        flags.push_back(i % 3 == 0 ? 0 : i % 5 + 1);
        raw.push_back(i % 3 == 0 ? '\0' : '\1');
      }
      Encoded e = varints(5, flags, 1, true);
      check_decoded(model_with(TensorProto::BOOL, {count * 3}, e.wire), raw);
    }
    SUBCASE("float_data one value per field, and in two packed fields") {
      Encoded unpacked = fixeds(4, 4, 0);
      check_decoded(model_with(TensorProto::FLOAT, {count}, unpacked.wire), unpacked.raw);
      Encoded chunks = fixeds(4, 4, 2);
      check_decoded(model_with(TensorProto::FLOAT, {count}, chunks.wire), chunks.raw);
      check_decoded(model_with(TensorProto::COMPLEX64, {count / 2}, chunks.wire), chunks.raw);
    }
    SUBCASE("double_data one value per field") {
      Encoded e = fixeds(10, 8, 0);
      check_decoded(model_with(TensorProto::DOUBLE, {count}, e.wire), e.raw);
    }
  }

  TEST_CASE("a Constant's int64_data in an If branch is decoded too") {
    auto model = npucc::test::parse_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (bool c) => (int64[6000] y) {
        y = If (c) <then_branch = g1 () => (int64[6000] a) {
                      k = Constant <value = int64[1] {0}> ()
                      a = Identity(k)
                    },
                    else_branch = g2 () => (int64[6000] b) { b = Identity(z) }>
      }
    )");
    auto* branch = model.mutable_graph()->mutable_node(0)->mutable_attribute(0)->mutable_g();
    auto* value = branch->mutable_node(0)->mutable_attribute(0)->mutable_t();
    value->clear_int64_data();
    value->set_dims(0, k_count);
    std::string raw;
    for (int64_t v : wide_values()) {
      value->add_int64_data(v); // protobuf writes int64_data packed
      raw += little_endian(static_cast<uint64_t>(v), 8);
    }
    auto* zeros = model.mutable_graph()->add_initializer();
    *zeros = *value;
    zeros->set_name("z");
    fs::path path = write_model(model.SerializeAsString());
    npucc::Model read = npucc::read_model(path, {}, npucc::Weights::in_table);
    const auto& k = read.proto.graph().node(0).attribute(0).g().node(0).attribute(0).t();
    REQUIRE(npucc::model::is_stored(k));
    CHECK(*npucc::model::raw_bytes(k) == raw);
    CHECK(*npucc::model::raw_bytes(read.proto.graph().initializer(0)) == raw);
  }

  TEST_CASE("values that do not match the dims stay for the checks, which refuse them as before") {
    Encoded e = varints(7, wide_values(), 8, true);
    fs::path path = write_model(model_with(TensorProto::INT64, {k_count + 1}, e.wire));
    std::string message = read_error(path, npucc::Weights::in_table);
    CHECK(message == read_error(path, npucc::Weights::in_proto));
    CHECK(message.find("declares 6001 elements but holds 6000") != std::string::npos);
  }

  TEST_CASE("a damaged typed field is a one-line error, as a full parse gives") {
    Encoded e = varints(7, wide_values(), 8, true);
    std::string file = model_with(TensorProto::INT64, {k_count}, e.wire);
    SUBCASE("the file ends inside the field") {
      file.resize(file.size() - 100);
    }
    SUBCASE("a varint of more than ten bytes") {
      size_t at = file.size() - 20;
      for (size_t i = at; i < at + 11; ++i) {
        file[i] = static_cast<char>(0xff);
      }
    }
    SUBCASE("packed float_data that is not a whole number of floats") {
      Encoded f = fixeds(4, 4, 1);
      file = model_with(TensorProto::FLOAT, {k_count},
                        length_delimited(4, f.raw.substr(0, f.raw.size() - 2)));
    }
    fs::path path = write_model(file);
    std::string message = read_error(path, npucc::Weights::in_table);
    CHECK(message == read_error(path, npucc::Weights::in_proto));
    CHECK(message != "no error");
    CHECK(message.find('\n') == std::string::npos);
  }
}
