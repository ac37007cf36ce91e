#include "model/typed_data.h"

#include "model/onnx_fields.h"
#include "model/varint_ends.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <onnx/onnx_pb.h>

namespace npucc::model {

namespace {

using namespace onnx_fields; // model/onnx_fields.h
using onnx::TensorProto;

constexpr size_t k_block_bytes = 1 << 20;
constexpr uint64_t k_read_bytes = 1 << 20;
constexpr size_t k_max_varint = 10;

// The values of a typed field's occurrences (packed, or one per field), read as protobuf
// would parse them, their raw bytes handed on a block at a time.
class ValueReader {
public:
  // With `out` null, the values are only counted and checked.
  ValueReader(WireSource& file, const TypedValues& values, const RawBlocks* out)
      : m_file(file), m_layout(values.layout), m_expected(values.values), m_out(out) {}

  // Adds the values of one occurrence of the field; false when decoding stops (m_result
  // says why).
  bool field(const Field& field) {
    if (field.wire == k_wire_bytes) {
      return packed(field.body, field.end);
    }
    const uint32_t size = width();
    const uint32_t wire = size == 4 ? k_wire_fixed32 : size == 8 ? k_wire_fixed64 : k_wire_varint;
    if (field.wire != wire) {
      return stop(Decoded::mismatch); // protobuf keeps it as an unknown field
    }
    uint64_t value = field.value;
    if (wire != k_wire_varint) {
      std::string bytes;
      if (!m_file.append(field.end - size, size, bytes)) {
        return stop(Decoded::malformed);
      }
      value = little_endian(bytes.data(), size);
    }
    return add(value);
  }

  Decoded finish() {
    if (m_result == Decoded::all && m_count != m_expected) {
      m_result = Decoded::mismatch;
    }
    if (m_result == Decoded::all && m_fill > 0 &&
        !(*m_out)(std::string_view(m_block.get(), m_fill))) {
      m_result = Decoded::stopped;
    }
    return m_result;
  }

private:
  // Bytes per value on the wire: 4 (float_data), 8 (double_data) or 0 (varints).
  uint32_t width() const {
    if (m_layout.field == k_tensor_float_data) {
      return 4;
    }
    return m_layout.field == k_tensor_double_data ? 8 : 0;
  }

  static uint64_t little_endian(const char* bytes, uint32_t size) {
    uint64_t value = 0;
    for (uint32_t i = 0; i < size; ++i) {
      value |= uint64_t{static_cast<uint8_t>(bytes[i])} << (8 * i);
    }
    return value;
  }

  bool stop(Decoded why) {
    m_result = why;
    return false;
  }

  // Reads the packed values a chunk at a time: a value cut by a chunk's end is read again
  // at the start of the next.
  bool packed(uint64_t begin, uint64_t end) {
    const uint32_t size = width();
    if (size != 0 && (end - begin) % size != 0) {
      return stop(Decoded::malformed);
    }
    if (!m_out && size == 0) { // the reader's check: only their count matters
      std::optional<uint64_t> values = count_packed_varints(m_file, begin, end);
      if (!values) {
        return stop(Decoded::malformed);
      }
      m_count += *values;
      return m_count <= m_expected || stop(Decoded::mismatch);
    }
    std::string chunk;
    for (uint64_t pos = begin; pos < end;) {
      chunk.clear();
      const uint64_t length = std::min<uint64_t>(k_read_bytes, end - pos);
      if (!m_file.append(pos, length, chunk)) {
        return stop(Decoded::malformed);
      }
      std::optional<size_t> used = size == 0 ? varints(chunk, pos + length == end) : fixeds(chunk);
      if (!used) {
        return false;
      }
      pos += *used;
    }
    return true;
  }

  // The varints that end in `chunk`, added; the bytes they took. One cut by the chunk's
  // end waits for the next chunk, unless this is the field's `last`.
  std::optional<size_t> varints(std::string_view chunk, bool last) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(chunk.data());
    const size_t size = chunk.size();
    size_t pos = 0;
    // A word at a time while a whole varint and the word after it fit (int64_data's
    // negative values take ten bytes each: byte by byte, decoding was most of a compile).
    while (size - pos >= 2 * sizeof(uint64_t)) {
      uint64_t value = 0;
      size_t used = decode_varint_word(bytes + pos, value);
      if (used == 0) {
        stop(Decoded::malformed);
        return std::nullopt;
      }
      if (!add(value)) {
        return std::nullopt;
      }
      pos += used;
    }
    while (pos < size) {
      // A varint takes ten bytes at most: with that many left no check of the end is needed.
      const bool whole = size - pos >= k_max_varint;
      uint64_t value = 0;
      size_t at = pos;
      uint8_t byte = 0x80;
      for (int shift = 0; (byte & 0x80) != 0 && shift < 70 && (whole || at < size); shift += 7) {
        byte = bytes[at++];
        value |= uint64_t{byte & 0x7fu} << shift;
      }
      if ((byte & 0x80) != 0) { // ten bytes and more to come, or the chunk's end
        if (last || whole || pos == 0) {
          stop(Decoded::malformed);
          return std::nullopt;
        }
        return pos;
      }
      if (!add(value)) {
        return std::nullopt;
      }
      pos = at;
    }
    return pos;
  }

  // The varint at `p`, with at least 16 bytes readable there; its length, or 0 when it runs
  // past ten bytes. Branch-free: int64_data holds nine-byte (positive) and ten-byte
  // (negative) values in any order, and a branch on the length mispredicted on every sign
  // change. The first eight bytes' 7-bit groups are packed in three steps (pairs, quads,
  // the word) instead of one shift per byte.
  static size_t decode_varint_word(const uint8_t* p, uint64_t& value) {
    constexpr uint64_t k_high_bits = 0x8080808080808080ull;
    uint64_t word = 0;
    std::memcpy(&word, p, sizeof(word));
    word = wire_word(word);
    // A bit at 8k for each byte k that ends the varint, and a sentinel past the last byte
    // (bit 63 for the word, bit 16 for bytes 8 and 9): the lowest bit gives the length.
    const uint64_t ends = ((~word & k_high_bits) >> 7) | (uint64_t{1} << 63);
    const uint32_t tail_ends = ((~(p[8] | uint32_t{p[9]} << 8) & 0x8080u) >> 7) | (1u << 16);
    const size_t first = static_cast<size_t>(__builtin_ctzll(ends)) / 8 + 1;   // 1..8
    const size_t more = static_cast<size_t>(__builtin_ctz(tail_ends)) / 8 + 1; // 1..3
    const bool past_word = __builtin_ctzll(ends) == 63;
    const size_t length = first + (more & -static_cast<size_t>(past_word));
    uint64_t groups = word & 0x7f7f7f7f7f7f7f7full & (~uint64_t{0} >> (64 - 8 * first));
    groups = ((groups & 0x7f007f007f007f00ull) >> 1) | (groups & 0x007f007f007f007full);
    groups = ((groups & 0x3fff00003fff0000ull) >> 2) | (groups & 0x00003fff00003fffull);
    groups = ((groups & 0x0fffffff00000000ull) >> 4) | (groups & 0x000000000fffffffull);
    // Bytes 8 and 9 add bits 56-63; what lies past bit 63 is dropped, as protobuf does.
    const uint64_t ninth = (uint64_t{p[8] & 0x7fu} << 56) & -uint64_t{length >= 9};
    const uint64_t tenth = (uint64_t{p[9] & 0x01u} << 63) & -uint64_t{length >= 10};
    value = groups | ninth | tenth;
    return length <= k_max_varint ? length : 0;
  }

  std::optional<size_t> fixeds(std::string_view chunk) {
    const uint32_t size = width();
    const size_t whole = chunk.size() - chunk.size() % size;
    for (size_t pos = 0; pos < whole; pos += size) {
      if (!add(little_endian(chunk.data() + pos, size))) {
        return std::nullopt;
      }
    }
    return whole;
  }

  bool add(uint64_t value) {
    if (++m_count > m_expected) {
      return stop(Decoded::mismatch);
    }
    if (!m_out) {
      return true;
    }
    if (m_layout.boolean) {
      value = static_cast<uint32_t>(value) != 0 ? 1 : 0; // protobuf reads an int32
    }
    // The value's low bytes, little-endian as raw data is (the block has room for a
    // whole word past its end).
    value = wire_word(value);
    std::memcpy(m_block.get() + m_fill, &value, sizeof(value));
    m_fill += m_layout.value_bytes;
    if (m_fill >= k_block_bytes) {
      if (!(*m_out)(std::string_view(m_block.get(), m_fill))) {
        return stop(Decoded::stopped);
      }
      m_fill = 0;
    }
    return true;
  }

  WireSource& m_file;
  TypedLayout m_layout;
  uint64_t m_expected;
  const RawBlocks* m_out;
  std::unique_ptr<char[]> m_block{new char[k_block_bytes + sizeof(uint64_t)]};
  size_t m_fill = 0;
  uint64_t m_count = 0;
  Decoded m_result = Decoded::all;
};

} // namespace

std::optional<TypedLayout> typed_layout(int64_t data_type) {
  switch (data_type) {
  case TensorProto::FLOAT:
    return TypedLayout{k_tensor_float_data, 1, 4, false};
  case TensorProto::COMPLEX64:
    return TypedLayout{k_tensor_float_data, 2, 4, false};
  case TensorProto::DOUBLE:
    return TypedLayout{k_tensor_double_data, 1, 8, false};
  case TensorProto::COMPLEX128:
    return TypedLayout{k_tensor_double_data, 2, 8, false};
  case TensorProto::INT64:
    return TypedLayout{k_tensor_int64_data, 1, 8, false};
  case TensorProto::UINT32:
    return TypedLayout{k_tensor_uint64_data, 1, 4, false};
  case TensorProto::UINT64:
    return TypedLayout{k_tensor_uint64_data, 1, 8, false};
  case TensorProto::INT32:
    return TypedLayout{k_tensor_int32_data, 1, 4, false};
  case TensorProto::INT16:
  case TensorProto::UINT16:
  case TensorProto::FLOAT16:
  case TensorProto::BFLOAT16:
    return TypedLayout{k_tensor_int32_data, 1, 2, false};
  case TensorProto::INT8:
  case TensorProto::UINT8:
    return TypedLayout{k_tensor_int32_data, 1, 1, false};
  case TensorProto::BOOL:
    return TypedLayout{k_tensor_int32_data, 1, 1, true};
  default:
    return std::nullopt;
  }
}

Decoded decode_typed(WireSource& file, const TypedValues& values, const RawBlocks* out) {
  ValueReader reader(file, values, out);
  Field field;
  for (uint64_t pos = values.begin; pos < values.end;) {
    if (!next_field(file, pos, values.end, field)) {
      return Decoded::malformed;
    }
    if (field.number == values.layout.field && !reader.field(field)) {
      break;
    }
  }
  return reader.finish();
}

} // namespace npucc::model
