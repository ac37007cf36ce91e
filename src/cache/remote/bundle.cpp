#include "cache/remote/bundle.h"

#include "cache/entry_format.h"
#include "npucc/error.h"
#include "util/eintr.h"
#include "util/fd.h"
#include "util/file_io.h"
#include "util/hex.h"
#include "util/safe_open.h"
#include "util/sha256.h"
#include "util/strings.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace npucc::cache::remote {

namespace fs = std::filesystem;

namespace {

constexpr size_t k_magic_bytes = sizeof(k_bundle_magic) - 1;
constexpr size_t k_digest_bytes = 32;
constexpr size_t k_chunk = size_t{1} << 20;

// Closes the descriptor whatever happens.
using util::Fd;

void put_u16(std::string& out, uint16_t value) {
  out += static_cast<char>(value >> 8);
  out += static_cast<char>(value & 0xff);
}

void put_u32(std::string& out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out += static_cast<char>((value >> shift) & 0xff);
  }
}

void put_u64(std::string& out, uint64_t value) {
  for (int shift = 56; shift >= 0; shift -= 8) {
    out += static_cast<char>((value >> shift) & 0xff);
  }
}

uint64_t get_uint(const unsigned char* bytes, size_t count) {
  uint64_t value = 0;
  for (size_t i = 0; i < count; ++i) {
    value = (value << 8) | bytes[i];
  }
  return value;
}

// The writer's side: copies `path` into `fd`; returns the raw SHA-256 of what it wrote.
std::string append_file(int fd, const fs::path& path, uint64_t bytes, std::string& buffer,
                        const fs::path& out) {
  util::Expected<util::OpenedFile> opened = util::open_regular_file(path);
  if (!opened) {
    throw Error(std::string("cannot read for the remote cache: ") + opened.error().what());
  }
  Fd in = std::move(opened->fd);
  util::Sha256 hash;
  uint64_t left = bytes;
  while (left > 0) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(left, buffer.size()));
    if (util::read_full(in.get(), buffer.data(), want) != static_cast<ssize_t>(want)) {
      throw Error(path.string() + ": changed while it was being bundled");
    }
    hash.update(buffer.data(), want);
    util::write_all(fd, buffer.data(), want, out);
    left -= want;
  }
  return util::hex_decode(hash.hex_digest()).value();
}

} // namespace

uint64_t write_bundle(const fs::path& dir, const std::vector<std::string>& names,
                      const fs::path& out) {
  if (names.empty() || names.size() > k_bundle_max_files) {
    throw Error(dir.string() + ": cannot bundle " + std::to_string(names.size()) + " files");
  }
  std::string head(k_bundle_magic, k_magic_bytes);
  put_u32(head, static_cast<uint32_t>(names.size()));
  std::vector<uint64_t> sizes;
  std::vector<size_t> digest_at; // where each file's checksum goes in `head`
  for (const auto& name : names) {
    if (name.size() > k_bundle_max_name || !(is_plain_file_name(name) || name == k_header_file)) {
      throw Error(name + ": not a plain file name; cannot bundle it");
    }
    struct stat st {};
    fs::path path = dir / name;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      throw Error(path.string() + ": not a regular file; cannot bundle it");
    }
    sizes.push_back(static_cast<uint64_t>(st.st_size));
    put_u16(head, static_cast<uint16_t>(name.size()));
    head += name;
    put_u64(head, sizes.back());
    digest_at.push_back(head.size());
    head.append(k_digest_bytes, '\0'); // filled in once the file is copied
  }
  Fd fd(::open(out.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (fd.get() < 0) {
    throw Error(out.string() + ": cannot create: " + std::strerror(errno));
  }
  // One read of each file: its checksum is taken while it is copied, then written back
  // into the table.
  util::write_all(fd.get(), head.data(), head.size(), out);
  std::string buffer(k_chunk, '\0');
  uint64_t total = head.size();
  for (size_t i = 0; i < names.size(); ++i) {
    head.replace(digest_at[i], k_digest_bytes,
                 append_file(fd.get(), dir / names[i], sizes[i], buffer, out));
    total += sizes[i];
  }
  std::string digest = util::hex_decode(util::sha256_hex(head)).value();
  util::write_all(fd.get(), digest.data(), digest.size(), out);
  if (::pwrite(fd.get(), head.data(), head.size(), 0) != static_cast<ssize_t>(head.size())) {
    throw Error(out.string() + ": cannot write: " + std::strerror(errno));
  }
  if (::close(fd.release()) != 0) {
    throw Error(out.string() + ": cannot write: " + std::strerror(errno));
  }
  return total + digest.size();
}

BundleReceiver::BundleReceiver(fs::path into, uint64_t max_bytes)
    : m_into(std::move(into)), m_max(max_bytes) {
  // No bundle larger than the room its folder has: a server declaring (or sending) more
  // is refused before, or as soon as, it passes that, never after filling the disk.
  struct statvfs room {};
  if (::statvfs(m_into.c_str(), &room) == 0) {
    const uint64_t free_bytes = static_cast<uint64_t>(room.f_bavail) * room.f_frsize;
    if (free_bytes < m_max) {
      m_max = free_bytes;
      m_max_is_room = true;
    }
  }
}

std::string BundleReceiver::limit_text() const {
  return util::format_bytes(m_max) +
         (m_max_is_room ? ", the free space where it is unpacked" : ", the most a bundle may hold");
}

BundleReceiver::~BundleReceiver() {
  if (m_fd >= 0) {
    ::close(m_fd);
  }
}

void BundleReceiver::expect_size(uint64_t bytes) {
  m_expected = bytes;
  m_expected_known = true;
  if (bytes > m_max) {
    refuse("the object has " + std::to_string(bytes) + " bytes, more than " + limit_text());
  }
}

bool BundleReceiver::refuse(const std::string& problem) {
  if (m_problem.empty()) {
    m_problem = problem;
  }
  return false;
}

// Parses as much of the table as m_head holds; true when it is complete and checked.
bool BundleReceiver::parse_table() {
  const auto* bytes = reinterpret_cast<const unsigned char*>(m_head.data());
  size_t size = m_head.size();
  if (size < k_magic_bytes + 4) {
    return false;
  }
  m_format_v1 = std::memcmp(bytes, k_bundle_magic_v1, k_magic_bytes) == 0;
  if (!m_format_v1 && std::memcmp(bytes, k_bundle_magic, k_magic_bytes) != 0) {
    return refuse("not an npucc bundle (bad magic)");
  }
  uint64_t count = get_uint(bytes + k_magic_bytes, 4);
  if (count == 0 || count > k_bundle_max_files) {
    return refuse("bad file count " + std::to_string(count));
  }
  size_t offset = k_magic_bytes + 4;
  m_rows.clear();
  bool has_header = false;
  uint64_t payload = 0;
  for (uint64_t i = 0; i < count; ++i) {
    if (offset + 2 > size) {
      return false;
    }
    size_t length = static_cast<size_t>(get_uint(bytes + offset, 2));
    if (length == 0 || length > k_bundle_max_name) {
      return refuse("bad name length " + std::to_string(length) + " in the file table");
    }
    if (offset + 2 + length + 8 + k_digest_bytes > size) {
      return false;
    }
    Row row;
    row.name.assign(m_head.data() + offset + 2, length);
    row.size = get_uint(bytes + offset + 2 + length, 8);
    row.sha256 = util::hex_encode(bytes + offset + 2 + length + 8, k_digest_bytes);
    offset += 2 + length + 8 + k_digest_bytes;
    if (!(is_plain_file_name(row.name) || row.name == k_header_file) ||
        row.name.find("..") != std::string::npos || row.name.find('/') != std::string::npos) {
      return refuse("refused file name \"" + util::cut_for_message(row.name) + "\"");
    }
    for (const auto& seen : m_rows) {
      if (seen.name == row.name) {
        return refuse("file \"" + row.name + "\" appears twice");
      }
    }
    has_header = has_header || row.name == k_header_file;
    if (m_expected_known && (row.size > m_expected || payload + row.size > m_expected)) {
      return refuse("truncated: " + row.name + " has " + std::to_string(row.size) +
                    " bytes, more than the object's " + std::to_string(m_expected));
    }
    if (row.size > m_max || payload + row.size > m_max) {
      return refuse(row.name + " has " + std::to_string(row.size) + " bytes, more than " +
                    limit_text());
    }
    payload += row.size;
    m_rows.push_back(std::move(row));
  }
  if (!has_header) {
    return refuse(std::string("no ") + k_header_file + " in the bundle");
  }
  uint64_t total = offset + payload + k_digest_bytes;
  if (m_expected_known && total != m_expected) {
    return refuse("object has " + std::to_string(m_expected) + " bytes, its table describes " +
                  std::to_string(total) + (m_expected < total ? " (truncated)" : ""));
  }
  if (m_format_v1) {
    m_whole.update(m_head.data(), offset);
  } else {
    m_head_digest = util::sha256_hex(std::string_view(m_head.data(), offset));
  }
  // Not value-initialised: zeroing a megabyte that is overwritten at once is waste.
  m_piece.reset(new char[k_bundle_piece_bytes]);
  m_table_done = true;
  // Bytes past the table already belong to the payload.
  std::string rest = m_head.substr(offset);
  m_head.clear();
  return rest.empty() || feed_payload(rest.data(), rest.size());
}

bool BundleReceiver::open_next() {
  const Row& row = m_rows[m_file];
  fs::path path = m_into / row.name;
  // Created read-only, as entry files are; the descriptor still writes.
  m_fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0444);
  if (m_fd < 0) {
    return refuse(path.string() + ": cannot create: " + std::strerror(errno));
  }
  ::fchmod(m_fd, 0444); // whatever the umask
  m_file_hash = std::make_unique<util::Sha256>();
  m_left = row.size;
  return true;
}

// Hashes the gathered piece, then writes it: one pass over bytes still in the CPU cache.
// (A hashing thread measured slower: the bytes had to travel to another core's cache.)
bool BundleReceiver::write_piece() {
  size_t used = m_piece_used;
  m_piece_used = 0;
  return write_bytes(m_piece.get(), used);
}

bool BundleReceiver::write_bytes(const char* data, size_t size) {
  m_file_hash->update(data, size);
  if (m_format_v1) {
    m_whole.update(data, size);
  }
  util::Outcome written = util::try_write_all(m_fd, data, size, m_into / m_rows[m_file].name);
  if (!written) {
    return refuse(written.error().what()); // a full disk: the bundle is not taken
  }
  return true;
}

bool BundleReceiver::close_current() {
  const Row& row = m_rows[m_file];
  if (!write_piece()) {
    return false;
  }
  int fd = m_fd;
  m_fd = -1;
  if (::close(fd) != 0) {
    return refuse((m_into / row.name).string() + ": cannot write: " + std::strerror(errno));
  }
  if (m_file_hash->hex_digest() != row.sha256) {
    return refuse(row.name + " does not match its checksum");
  }
  m_names.push_back(row.name);
  ++m_file;
  return true;
}

// The next `size` bytes of the file being written (no more than it still lacks). Runs of
// k_bundle_direct_bytes or more (the Redis reader hands over up to 1 MiB at a time) are
// hashed and written where they are, without a copy, after what was gathered; shorter
// ones (libcurl hands over at most 16 KiB, CURL_MAX_WRITE_SIZE, whatever its buffer) are
// gathered into pieces of k_bundle_piece_bytes: a few large writes instead of one per
// network read.
bool BundleReceiver::add_to_file(const char* data, size_t size) {
  m_left -= size;
  if (size >= k_bundle_direct_bytes) {
    return write_piece() && write_bytes(data, size); // what was gathered goes first
  }
  while (size > 0) {
    size_t take = std::min(size, k_bundle_piece_bytes - m_piece_used);
    std::memcpy(m_piece.get() + m_piece_used, data, take);
    m_piece_used += take;
    data += take;
    size -= take;
    if (m_piece_used == k_bundle_piece_bytes && !write_piece()) {
      return false;
    }
  }
  return true;
}

bool BundleReceiver::feed_payload(const char* data, size_t size) {
  while (size > 0) {
    if (m_file < m_rows.size()) {
      if (m_fd < 0 && !open_next()) {
        return false;
      }
      size_t take = static_cast<size_t>(std::min<uint64_t>(m_left, size));
      if (!add_to_file(data, take)) {
        return false;
      }
      data += take;
      size -= take;
      if (m_left == 0 && !close_current()) {
        return false;
      }
      continue;
    }
    if (m_digest.size() + size > k_digest_bytes) {
      return refuse("the object is longer than its table and digest (padded)");
    }
    m_digest.append(data, size);
    size = 0;
  }
  // Empty files at the end of the table take no bytes.
  while (m_file < m_rows.size() && m_rows[m_file].size == 0) {
    if (!open_next() || !close_current()) {
      return false;
    }
  }
  return true;
}

bool BundleReceiver::feed(const char* data, size_t size) {
  if (!m_problem.empty()) {
    return false;
  }
  m_received += size;
  if (m_received > m_max) {
    return refuse("larger than " + limit_text());
  }
  if (m_table_done) {
    return feed_payload(data, size);
  }
  if (m_head.size() + size > k_max_table_bytes) {
    size_t room = k_max_table_bytes - m_head.size();
    m_head.append(data, room);
    if (!parse_table()) {
      return m_problem.empty() ? refuse("file table too long") : false;
    }
    return feed_payload(data + room, size - room);
  }
  m_head.append(data, size);
  if (!parse_table()) {
    return m_problem.empty();
  }
  return true;
}

UnpackResult BundleReceiver::finish() {
  UnpackResult result;
  if (m_problem.empty()) {
    if (!m_table_done) {
      refuse("object too short (" + std::to_string(m_received) + " bytes): truncated");
    } else if (m_file < m_rows.size() || m_digest.size() < k_digest_bytes) {
      refuse("object truncated at byte " + std::to_string(m_received));
    } else {
      std::string recorded = util::hex_encode(m_digest.data(), k_digest_bytes);
      if ((m_format_v1 ? m_whole.hex_digest() : m_head_digest) != recorded) {
        refuse("the bundle does not match its digest");
      }
    }
  }
  result.ok = m_problem.empty();
  result.problem = m_problem;
  result.names = m_names;
  if (result.ok) {
    for (const auto& row : m_rows) {
      result.sha256[row.name] = row.sha256;
    }
  }
  return result;
}

UnpackResult unpack_bundle(const fs::path& bundle, const fs::path& into) {
  BundleReceiver receiver(into);
  util::Expected<util::OpenedFile> opened = util::open_regular_file(bundle);
  if (!opened) {
    UnpackResult result;
    result.problem = std::string("cannot read the object: ") + opened.error().what();
    return result;
  }
  Fd fd = std::move(opened->fd);
  receiver.expect_size(static_cast<uint64_t>(opened->info.st_size));
  std::string buffer(k_chunk, '\0');
  for (;;) {
    ssize_t got = util::read_some(fd.get(), buffer.data(), buffer.size());
    if (got <= 0 || !receiver.feed(buffer.data(), static_cast<size_t>(got))) {
      break;
    }
  }
  return receiver.finish();
}

} // namespace npucc::cache::remote
