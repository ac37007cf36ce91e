#include "model/wire_source.h"

#include "util/eintr.h"

namespace npucc::model {

bool WireSource::byte(uint64_t pos, uint8_t& out) {
  if (m_fd < 0) {
    out = static_cast<uint8_t>(m_bytes[pos]);
    return true;
  }
  if (pos < m_window_start || pos >= m_window_start + m_window.size()) {
    m_window.resize(k_window);
    ssize_t n = util::pread_full(m_fd, m_window.data(), k_window, pos);
    if (n <= 0) {
      m_window.clear();
      return false;
    }
    m_window.resize(static_cast<size_t>(n));
    m_window_start = pos;
  }
  out = static_cast<uint8_t>(m_window[pos - m_window_start]);
  return true;
}

bool WireSource::append(uint64_t pos, uint64_t length, std::string& out) {
  if (m_fd < 0) {
    out.append(m_bytes.substr(pos, length));
    return true;
  }
  size_t old_size = out.size();
  out.resize(old_size + length);
  ssize_t n = util::pread_full(m_fd, out.data() + old_size, length, pos);
  return n == static_cast<ssize_t>(length);
}

bool read_varint(WireSource& file, uint64_t& pos, uint64_t end, uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64 && pos < end; shift += 7) {
    uint8_t byte = 0;
    if (!file.byte(pos++, byte)) {
      return false;
    }
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      return true;
    }
  }
  return false;
}

bool next_field(WireSource& file, uint64_t& pos, uint64_t end, Field& field) {
  field.start = pos;
  field.value = 0;
  uint64_t tag = 0;
  if (!read_varint(file, pos, end, tag) || (tag >> 3) == 0 || (tag >> 3) > (1u << 29) - 1) {
    return false;
  }
  field.number = static_cast<uint32_t>(tag >> 3);
  field.wire = static_cast<uint32_t>(tag & 7);
  uint64_t value = 0;
  switch (field.wire) {
  case k_wire_varint:
    if (!read_varint(file, pos, end, field.value)) {
      return false;
    }
    break;
  case k_wire_fixed64:
  case k_wire_fixed32: {
    uint64_t size = field.wire == k_wire_fixed64 ? 8 : 4;
    if (end - pos < size) {
      return false;
    }
    pos += size;
    break;
  }
  case k_wire_bytes:
    if (!read_varint(file, pos, end, value) || value > end - pos) {
      return false;
    }
    field.body = pos;
    pos += value;
    break;
  default:
    return false; // groups (deprecated) and invalid wire types
  }
  field.end = pos;
  return true;
}

void put_varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

} // namespace npucc::model
