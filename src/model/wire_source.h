#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

// Reading protobuf's wire format without parsing it: each field starts with a tag (field
// number and wire type) and, for bytes and messages, a length, so a reader can step over
// a field's contents without touching them (embedded_weights.h) or decode a typed field's
// values one at a time (typed_data.h).
namespace npucc::model {

constexpr uint32_t k_wire_varint = 0;
constexpr uint32_t k_wire_fixed64 = 1;
constexpr uint32_t k_wire_bytes = 2;
constexpr uint32_t k_wire_fixed32 = 5;

// Where the cut reads a serialized model from: bytes in memory, or an open file read
// with pread() a window at a time, never through a mapping (on a kernel that keeps large
// folios in the page cache, touching one byte of a mapping maps a megabyte or more, so
// a walk over a file's field headers would map most of its weights).
class WireSource {
public:
  explicit WireSource(std::string_view bytes) : m_bytes(bytes), m_size(bytes.size()) {}
  WireSource(int fd, uint64_t size) : m_fd(fd), m_size(size) {}
  uint64_t size() const { return m_size; }
  // The byte at `pos` (< size()); false on a read error.
  bool byte(uint64_t pos, uint8_t& out);
  // Appends the `length` bytes at `pos` to `out`; false on a read error.
  bool append(uint64_t pos, uint64_t length, std::string& out);

private:
  static constexpr size_t k_window = 64 * 1024;
  std::string_view m_bytes;
  int m_fd = -1;
  uint64_t m_size = 0;
  std::string m_window;
  uint64_t m_window_start = 0;
};

// One field of a message: [start, end) in the file; a bytes field's contents are
// [body, end), a varint's value is `value`.
struct Field {
  uint32_t number = 0;
  uint32_t wire = 0;
  uint64_t value = 0;
  uint64_t start = 0;
  uint64_t body = 0;
  uint64_t end = 0;
};

// The varint at `pos` (which moves past it), read no further than `end`.
bool read_varint(WireSource& file, uint64_t& pos, uint64_t end, uint64_t& value);

// The field at `pos` (which moves past it); false for anything malformed or a group.
bool next_field(WireSource& file, uint64_t& pos, uint64_t end, Field& field);

void put_varint(std::string& out, uint64_t value);

// A word read from memory (memcpy of 8 bytes) as the little-endian value it is on the wire.
inline uint64_t wire_word(uint64_t word) {
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  return __builtin_bswap64(word);
#else
  return word;
#endif
}

} // namespace npucc::model
