#include "accuracy/sample_formats.h"

#include "npucc/error.h"
#include "test_support.h"

#include <cstring>
#include <doctest/doctest.h>
#include <fstream>
#include <onnx/onnx_pb.h>
#include <zlib.h>

using namespace npucc;

namespace {

// A .npy file as NumPy 1.x writes it: magic, version 1.0, a header padded to 64 bytes.
std::string npy(const std::string& descr, const std::string& shape, const std::string& data,
                const std::string& fortran = "False") {
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) {
    header += ' ';
  }
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

std::string float_bytes(std::vector<float> values) {
  std::string out(values.size() * 4, '\0');
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

void put16(std::string& out, uint32_t v) {
  out += static_cast<char>(v & 0xff);
  out += static_cast<char>((v >> 8) & 0xff);
}
void put32(std::string& out, uint32_t v) {
  put16(out, v & 0xffff);
  put16(out, v >> 16);
}

// A zip archive of `members` (name, bytes), stored or deflated, as Python's zipfile writes.
std::string zip(const std::vector<std::pair<std::string, std::string>>& members, bool compress) {
  std::string out, directory;
  for (const auto& [name, data] : members) {
    std::string packed = data;
    if (compress) {
      z_stream s{};
      deflateInit2(&s, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
      packed.assign(deflateBound(&s, data.size()), '\0');
      s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
      s.avail_in = static_cast<uInt>(data.size());
      s.next_out = reinterpret_cast<Bytef*>(packed.data());
      s.avail_out = static_cast<uInt>(packed.size());
      deflate(&s, Z_FINISH);
      packed.resize(s.total_out);
      deflateEnd(&s);
    }
    const uint32_t offset = static_cast<uint32_t>(out.size());
    const uint32_t crc = static_cast<uint32_t>(
        crc32(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size())));
    put32(out, 0x04034b50);
    put16(out, 20), put16(out, 0), put16(out, compress ? 8 : 0), put16(out, 0), put16(out, 0);
    put32(out, crc), put32(out, static_cast<uint32_t>(packed.size()));
    put32(out, static_cast<uint32_t>(data.size()));
    put16(out, static_cast<uint32_t>(name.size())), put16(out, 0);
    out += name + packed;
    put32(directory, 0x02014b50);
    put16(directory, 20), put16(directory, 20), put16(directory, 0);
    put16(directory, compress ? 8 : 0), put16(directory, 0), put16(directory, 0);
    put32(directory, crc), put32(directory, static_cast<uint32_t>(packed.size()));
    put32(directory, static_cast<uint32_t>(data.size()));
    put16(directory, static_cast<uint32_t>(name.size()));
    put16(directory, 0), put16(directory, 0), put16(directory, 0), put16(directory, 0);
    put32(directory, 0), put32(directory, offset);
    directory += name;
  }
  const uint32_t directory_at = static_cast<uint32_t>(out.size());
  out += directory;
  put32(out, 0x06054b50);
  put16(out, 0), put16(out, 0);
  put16(out, static_cast<uint32_t>(members.size())), put16(out, static_cast<uint32_t>(members.size()));
  put32(out, static_cast<uint32_t>(directory.size())), put32(out, directory_at), put16(out, 0);
  return out;
}

std::filesystem::path write(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

} // namespace

TEST_SUITE("npucc::accuracy::sample_formats") {
  TEST_CASE(".npy: type, shape and bytes") {
    auto t = accuracy::parse_npy(npy("<f4", "(2, 3)", float_bytes({1, 2, 3, 4, 5, 6})), "x", "x.npy");
    CHECK(t.name == "x");
    CHECK(t.type == onnx::TensorProto::FLOAT);
    CHECK(t.shape == std::vector<int64_t>{2, 3});
    CHECK(t.bytes == float_bytes({1, 2, 3, 4, 5, 6}));
    auto scalar = accuracy::parse_npy(npy("<i8", "()", std::string(8, '\0')), "n", "n.npy");
    CHECK(scalar.shape.empty());
    CHECK(scalar.type == onnx::TensorProto::INT64);
    auto one = accuracy::parse_npy(npy("|b1", "(1,)", std::string(1, '\1')), "b", "b.npy");
    CHECK(one.shape == std::vector<int64_t>{1});
    CHECK(one.type == onnx::TensorProto::BOOL);
  }

  TEST_CASE(".npy: what is refused names the file") {
    CHECK_THROWS_WITH_AS(accuracy::parse_npy("not numpy", "x", "a.npy"),
                         doctest::Contains("a.npy: not a NumPy .npy file"), Error);
    CHECK_THROWS_WITH_AS(accuracy::parse_npy(npy(">f4", "(1,)", float_bytes({1})), "x", "a.npy"),
                         doctest::Contains("'>f4'"), Error);
    CHECK_THROWS_WITH_AS(
        accuracy::parse_npy(npy("<f4", "(2, 2)", float_bytes({1, 2, 3, 4}), "True"), "x", "a.npy"),
        doctest::Contains("Fortran order"), Error);
    CHECK_THROWS_WITH_AS(accuracy::parse_npy(npy("<f4", "(3,)", float_bytes({1, 2})), "x", "a.npy"),
                         doctest::Contains("holds 8 data bytes"), Error);
    CHECK_THROWS_AS(accuracy::parse_npy(npy("<c8", "(1,)", std::string(8, '\0')), "x", "a.npy"),
                    Error);
  }

  TEST_CASE(".npz: stored and deflated members, named without .npy") {
    auto dir = test::temp_dir("npz");
    for (bool compress : {false, true}) {
      auto file = write(dir / (compress ? "d.npz" : "s.npz"),
                        zip({{"x.npy", npy("<f4", "(2,)", float_bytes({1.5, -2}))},
                             {"ids.npy", npy("<i8", "(1,)", std::string(8, '\3'))}},
                            compress));
      auto tensors = accuracy::read_npz(file);
      REQUIRE(tensors.size() == 2);
      CHECK(tensors[0].name == "x");
      CHECK(tensors[0].bytes == float_bytes({1.5, -2}));
      CHECK(tensors[1].name == "ids");
      CHECK(tensors[1].type == onnx::TensorProto::INT64);
    }
    CHECK_THROWS_WITH_AS(accuracy::read_npz(write(dir / "junk.npz", "not a zip at all")),
                         doctest::Contains("not a .npz (zip) archive"), Error);
  }

  TEST_CASE("TensorProto files: raw data and typed fields") {
    auto dir = test::temp_dir("pb");
    onnx::TensorProto proto;
    proto.set_name("x");
    proto.set_data_type(onnx::TensorProto::FLOAT);
    proto.add_dims(2);
    proto.add_float_data(1);
    proto.add_float_data(2);
    auto t = accuracy::read_tensor_proto(write(dir / "typed.pb", proto.SerializeAsString()));
    CHECK(t.name == "x");
    CHECK(t.bytes == float_bytes({1, 2}));
    proto.clear_float_data();
    proto.set_raw_data(float_bytes({3, 4}));
    CHECK(accuracy::read_tensor_proto(write(dir / "raw.pb", proto.SerializeAsString())).bytes ==
          float_bytes({3, 4}));
    proto.add_dims(5); // [2,5] with 2 values
    CHECK_THROWS_WITH_AS(accuracy::read_tensor_proto(write(dir / "short.pb", proto.SerializeAsString())),
                         doctest::Contains("short.pb: holds 8 data bytes"), Error);
    onnx::TensorProto halves;
    halves.set_data_type(onnx::TensorProto::FLOAT16);
    halves.add_dims(1);
    halves.add_int32_data(0x3c00); // 1.0
    auto h = accuracy::read_tensor_proto(write(dir / "half.pb", halves.SerializeAsString()));
    CHECK(h.bytes == std::string("\x00\x3c", 2));
  }
}
