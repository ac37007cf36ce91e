#include "accuracy/sample_formats.h"

#include "npucc/error.h"
#include "util/file_io.h"

#include <cstring>
#include <onnx/onnx_pb.h>
#include <zlib.h>

namespace npucc::accuracy {

namespace {

[[noreturn]] void bad(const std::string& file, const std::string& what) {
  throw Error(file + ": " + what);
}

uint32_t little32(const std::string& bytes, size_t at) {
  uint32_t value = 0;
  for (int i = 3; i >= 0; --i) {
    value = (value << 8) | static_cast<uint8_t>(bytes[at + static_cast<size_t>(i)]);
  }
  return value;
}

uint16_t little16(const std::string& bytes, size_t at) {
  return static_cast<uint16_t>(static_cast<uint8_t>(bytes[at]) |
                               (static_cast<uint8_t>(bytes[at + 1]) << 8));
}

// NumPy's dtype strings ('<f4') -> ONNX element types.
int32_t npy_type(const std::string& descr, const std::string& file) {
  static const std::pair<const char*, int32_t> k_types[] = {
      {"f2", onnx::TensorProto::FLOAT16}, {"f4", onnx::TensorProto::FLOAT},
      {"f8", onnx::TensorProto::DOUBLE},  {"i1", onnx::TensorProto::INT8},
      {"i2", onnx::TensorProto::INT16},   {"i4", onnx::TensorProto::INT32},
      {"i8", onnx::TensorProto::INT64},   {"u1", onnx::TensorProto::UINT8},
      {"u2", onnx::TensorProto::UINT16},  {"u4", onnx::TensorProto::UINT32},
      {"u8", onnx::TensorProto::UINT64},  {"b1", onnx::TensorProto::BOOL},
  };
  if (descr.size() == 3 && (descr[0] == '<' || descr[0] == '|' || descr[0] == '=')) {
    for (const auto& [code, type] : k_types) {
      if (descr.compare(1, 2, code) == 0) {
        return type;
      }
    }
  }
  bad(file, "NumPy dtype '" + descr + "' is not one npucc reads (little-endian float16/32/64, "
            "int8-64, uint8-64, bool)");
}

// The value after 'key': in the header's Python dict literal.
std::string header_value(const std::string& header, const std::string& key,
                         const std::string& file) {
  size_t at = header.find("'" + key + "'");
  size_t colon = at == std::string::npos ? at : header.find(':', at);
  if (colon == std::string::npos) {
    bad(file, "not a NumPy .npy file (its header has no '" + key + "')");
  }
  size_t begin = header.find_first_not_of(' ', colon + 1);
  size_t end = begin;
  if (begin != std::string::npos && header[begin] == '(') {
    end = header.find(')', begin);
    end = end == std::string::npos ? end : end + 1;
  } else if (begin != std::string::npos && header[begin] == '\'') {
    end = header.find('\'', begin + 1);
    end = end == std::string::npos ? end : end + 1;
  } else {
    end = header.find_first_of(",}", begin);
  }
  if (begin == std::string::npos || end == std::string::npos) {
    bad(file, "not a NumPy .npy file (its header's '" + key + "' is cut short)");
  }
  return header.substr(begin, end - begin);
}

std::vector<int64_t> npy_shape(const std::string& text, const std::string& file) {
  std::vector<int64_t> shape;
  std::string number;
  for (char c : text.substr(1)) {
    if (c >= '0' && c <= '9') {
      number += c;
    } else if (c == ',' || c == ')') {
      if (!number.empty()) {
        if (number.size() > 15) {
          bad(file, "a NumPy shape dim is too large");
        }
        shape.push_back(std::stoll(number));
        number.clear();
      }
    } else if (c != ' ' && c != 'L') {
      bad(file, "not a NumPy .npy file (its shape is " + text + ")");
    }
  }
  return shape;
}

} // namespace

runtime::Tensor parse_npy(const std::string& bytes, const std::string& name,
                          const std::string& file) {
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) {
    bad(file, "not a NumPy .npy file");
  }
  const int major = static_cast<uint8_t>(bytes[6]);
  const size_t header_at = major == 1 ? 10 : 12;
  if (major < 1 || major > 3 || bytes.size() < header_at) {
    bad(file, "NumPy .npy format version " + std::to_string(major) + " is not one npucc reads");
  }
  const size_t header_length = major == 1 ? little16(bytes, 8) : little32(bytes, 8);
  if (bytes.size() < header_at + header_length) {
    bad(file, "the NumPy header is cut short");
  }
  const std::string header = bytes.substr(header_at, header_length);
  std::string descr = header_value(header, "descr", file);
  descr = descr.size() >= 2 ? descr.substr(1, descr.size() - 2) : descr;
  if (header_value(header, "fortran_order", file) != "False") {
    bad(file, "the array is in Fortran order: save it with np.ascontiguousarray first");
  }
  runtime::Tensor tensor;
  tensor.name = name;
  tensor.type = npy_type(descr, file);
  tensor.shape = npy_shape(header_value(header, "shape", file), file);
  const size_t expected =
      static_cast<size_t>(runtime::element_count(tensor.shape)) * runtime::element_size(tensor.type);
  if (bytes.size() - header_at - header_length != expected) {
    bad(file, "holds " + std::to_string(bytes.size() - header_at - header_length) +
                  " data bytes, its header says " + runtime::describe(tensor.type, tensor.shape) +
                  " (" + std::to_string(expected) + ")");
  }
  tensor.bytes = bytes.substr(header_at + header_length);
  return tensor;
}

namespace {

// A member's bytes: stored, or deflated (np.savez_compressed).
std::string inflate_member(const std::string& data, size_t size, const std::string& file) {
  std::string out(size, '\0');
  z_stream stream{};
  if (inflateInit2(&stream, -MAX_WBITS) != Z_OK) {
    bad(file, "cannot start zlib");
  }
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  int status = inflate(&stream, Z_FINISH);
  inflateEnd(&stream);
  if (status != Z_STREAM_END || stream.total_out != size) {
    bad(file, "a member of the archive does not inflate to its stated size");
  }
  return out;
}

struct ZipMember {
  std::string name;
  uint16_t method = 0;
  size_t packed = 0, size = 0, local_header = 0;
};

std::vector<ZipMember> zip_directory(const std::string& zip, const std::string& file) {
  size_t end = std::string::npos;
  for (size_t at = zip.size() >= 22 ? zip.size() - 22 : std::string::npos;
       at != std::string::npos && zip.size() - at <= 22 + 65535; --at) {
    if (little32(zip, at) == 0x06054b50) {
      end = at;
      break;
    }
    if (at == 0) {
      break;
    }
  }
  if (end == std::string::npos) {
    bad(file, "not a .npz (zip) archive");
  }
  const size_t count = little16(zip, end + 10);
  size_t at = little32(zip, end + 16);
  std::vector<ZipMember> members;
  for (size_t i = 0; i < count; ++i) {
    if (at + 46 > zip.size() || little32(zip, at) != 0x02014b50) {
      bad(file, "the zip archive's directory is damaged");
    }
    ZipMember member;
    member.method = little16(zip, at + 10);
    member.packed = little32(zip, at + 20);
    member.size = little32(zip, at + 24);
    member.local_header = little32(zip, at + 42);
    const size_t name_length = little16(zip, at + 28);
    if (member.packed == 0xffffffff || member.size == 0xffffffff ||
        member.local_header == 0xffffffff) {
      bad(file, "an array of 4 GiB or more (zip64) is not read: use a folder of .npy files");
    }
    member.name = zip.substr(at + 46, name_length);
    at += 46 + name_length + little16(zip, at + 30) + little16(zip, at + 32);
    members.push_back(member);
  }
  return members;
}

} // namespace

std::vector<runtime::Tensor> read_npz(const std::filesystem::path& path) {
  return parse_npz(util::read_file(path), path.string());
}

std::vector<runtime::Tensor> parse_npz(const std::string& zip, const std::string& file) {
  std::vector<runtime::Tensor> tensors;
  for (const auto& member : zip_directory(zip, file)) {
    const size_t local = member.local_header;
    if (local + 30 > zip.size() || little32(zip, local) != 0x04034b50) {
      bad(file, "the zip archive's member '" + member.name + "' is damaged");
    }
    const size_t data_at = local + 30 + little16(zip, local + 26) + little16(zip, local + 28);
    if (data_at + member.packed > zip.size()) {
      bad(file, "the zip archive's member '" + member.name + "' is cut short");
    }
    std::string data = zip.substr(data_at, member.packed);
    if (member.method == 8) {
      data = inflate_member(data, member.size, file);
    } else if (member.method != 0) {
      bad(file, "member '" + member.name + "' is compressed with zip method " +
                    std::to_string(member.method) + " (npucc reads stored and deflated ones)");
    }
    std::string name = member.name;
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) {
      name.resize(name.size() - 4);
    }
    tensors.push_back(parse_npy(data, name, file + ":" + member.name));
  }
  return tensors;
}

namespace {

template <typename Field, typename T> void append_values(std::string& out, const Field& values) {
  for (auto value : values) {
    T narrowed = static_cast<T>(value);
    out.append(reinterpret_cast<const char*>(&narrowed), sizeof(T));
  }
}

// The typed fields' values, packed as raw data would hold them.
std::string typed_values(const onnx::TensorProto& proto, const std::string& file) {
  std::string out;
  switch (proto.data_type()) {
  case onnx::TensorProto::FLOAT: append_values<decltype(proto.float_data()), float>(out, proto.float_data()); break;
  case onnx::TensorProto::DOUBLE: append_values<decltype(proto.double_data()), double>(out, proto.double_data()); break;
  case onnx::TensorProto::INT64: append_values<decltype(proto.int64_data()), int64_t>(out, proto.int64_data()); break;
  case onnx::TensorProto::UINT64: append_values<decltype(proto.uint64_data()), uint64_t>(out, proto.uint64_data()); break;
  case onnx::TensorProto::UINT32: append_values<decltype(proto.uint64_data()), uint32_t>(out, proto.uint64_data()); break;
  case onnx::TensorProto::INT32: append_values<decltype(proto.int32_data()), int32_t>(out, proto.int32_data()); break;
  case onnx::TensorProto::INT16: append_values<decltype(proto.int32_data()), int16_t>(out, proto.int32_data()); break;
  case onnx::TensorProto::UINT16:
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16: append_values<decltype(proto.int32_data()), uint16_t>(out, proto.int32_data()); break;
  case onnx::TensorProto::INT8: append_values<decltype(proto.int32_data()), int8_t>(out, proto.int32_data()); break;
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::BOOL: append_values<decltype(proto.int32_data()), uint8_t>(out, proto.int32_data()); break;
  default:
    bad(file, "tensor of " + runtime::type_name(proto.data_type()) + " is not one npucc reads");
  }
  return out;
}

} // namespace

runtime::Tensor read_tensor_proto(const std::filesystem::path& path) {
  return parse_tensor_proto(util::read_file(path), path.string());
}

runtime::Tensor parse_tensor_proto(const std::string& bytes, const std::string& file) {
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes)) {
    bad(file, "not an ONNX TensorProto file");
  }
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    bad(file, "a tensor with external data is not read: store its values in the file");
  }
  runtime::Tensor tensor;
  tensor.name = proto.name();
  tensor.type = proto.data_type();
  tensor.shape.assign(proto.dims().begin(), proto.dims().end());
  if (runtime::element_size(tensor.type) == 0) {
    bad(file, "tensor of " + runtime::type_name(tensor.type) + " is not one npucc reads");
  }
  for (int64_t dim : tensor.shape) {
    if (dim < 0) {
      bad(file, "a dim is negative");
    }
  }
  tensor.bytes = proto.has_raw_data() ? proto.raw_data() : typed_values(proto, file);
  const size_t expected = static_cast<size_t>(runtime::element_count(tensor.shape)) *
                          runtime::element_size(tensor.type);
  if (tensor.bytes.size() != expected) {
    bad(file, "holds " + std::to_string(tensor.bytes.size()) + " data bytes for " +
                  runtime::describe(tensor.type, tensor.shape) + " (" + std::to_string(expected) +
                  ")");
  }
  return tensor;
}

} // namespace npucc::accuracy
