#include "cache/remote/bundle.h"

#include "cache/entry_format.h"
#include "npucc/error.h"
#include "util/file_io.h"
#include "util/sha256.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace npucc::cache::remote {

namespace fs = std::filesystem;

namespace {

constexpr size_t k_magic_bytes = sizeof(k_bundle_magic) - 1;
constexpr size_t k_digest_bytes = 32;
constexpr size_t k_chunk = size_t{1} << 20;

// Closes the descriptor whatever happens.
class Fd {
public:
  explicit Fd(int fd) : m_fd(fd) {}
  ~Fd() {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return m_fd; }
  int release() {
    int fd = m_fd;
    m_fd = -1;
    return fd;
  }

private:
  int m_fd;
};

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

std::string raw_from_hex(const std::string& hex) {
  std::string raw;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    raw += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return raw;
}

std::string hex_from_raw(const unsigned char* raw, size_t size) {
  static const char digits[] = "0123456789abcdef";
  std::string hex;
  for (size_t i = 0; i < size; ++i) {
    hex += digits[raw[i] >> 4];
    hex += digits[raw[i] & 0xf];
  }
  return hex;
}

// Reads exactly `size` bytes; false at end of file or on an error.
bool read_exact(int fd, void* data, size_t size) {
  auto* out = static_cast<char*>(data);
  while (size > 0) {
    ssize_t got = ::read(fd, out, size);
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got <= 0) {
      return false;
    }
    out += got;
    size -= static_cast<size_t>(got);
  }
  return true;
}

// The writer's side: copies `path` into `fd`, hashing what it writes into `whole`.
void append_file(int fd, const fs::path& path, uint64_t bytes, util::Sha256& whole,
                 const fs::path& out) {
  Fd in(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (in.get() < 0) {
    throw Error(path.string() + ": cannot read for the remote cache: " + std::strerror(errno));
  }
  std::string buffer(k_chunk, '\0');
  uint64_t left = bytes;
  while (left > 0) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(left, buffer.size()));
    if (!read_exact(in.get(), buffer.data(), want)) {
      throw Error(path.string() + ": changed while it was being bundled");
    }
    whole.update(buffer.data(), want);
    util::write_all(fd, buffer.data(), want, out);
    left -= want;
  }
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
    head += raw_from_hex(util::sha256_file_hex(path));
  }
  Fd fd(::open(out.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (fd.get() < 0) {
    throw Error(out.string() + ": cannot create: " + std::strerror(errno));
  }
  util::Sha256 whole;
  whole.update(head);
  util::write_all(fd.get(), head.data(), head.size(), out);
  uint64_t total = head.size();
  for (size_t i = 0; i < names.size(); ++i) {
    append_file(fd.get(), dir / names[i], sizes[i], whole, out);
    total += sizes[i];
  }
  std::string digest = raw_from_hex(whole.hex_digest());
  util::write_all(fd.get(), digest.data(), digest.size(), out);
  if (::close(fd.release()) != 0) {
    throw Error(out.string() + ": cannot write: " + std::strerror(errno));
  }
  return total + digest.size();
}

UnpackResult unpack_bundle(const fs::path& bundle, const fs::path& into) {
  UnpackResult result;
  auto refuse = [&](const std::string& problem) {
    result.ok = false;
    result.problem = problem;
    return result;
  };
  Fd fd(::open(bundle.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  struct stat st {};
  if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0) {
    return refuse("cannot read the downloaded object: " + std::string(std::strerror(errno)));
  }
  const uint64_t object_bytes = static_cast<uint64_t>(st.st_size);
  unsigned char head[k_magic_bytes + 4];
  if (object_bytes < sizeof head + k_digest_bytes || !read_exact(fd.get(), head, sizeof head)) {
    return refuse("object too short (" + std::to_string(object_bytes) + " bytes)");
  }
  if (std::memcmp(head, k_bundle_magic, k_magic_bytes) != 0) {
    return refuse("not an npucc bundle (bad magic)");
  }
  util::Sha256 whole;
  whole.update(head, sizeof head);
  uint64_t count = get_uint(head + k_magic_bytes, 4);
  if (count == 0 || count > k_bundle_max_files) {
    return refuse("bad file count " + std::to_string(count));
  }
  struct Row {
    std::string name;
    uint64_t size = 0;
    std::string sha256;
  };
  std::vector<Row> rows;
  uint64_t offset = sizeof head;
  uint64_t payload = 0;
  bool has_header = false;
  for (uint64_t i = 0; i < count; ++i) {
    unsigned char length_bytes[2];
    if (offset + 2 > object_bytes || !read_exact(fd.get(), length_bytes, 2)) {
      return refuse("truncated file table");
    }
    uint64_t length = get_uint(length_bytes, 2);
    if (length == 0 || length > k_bundle_max_name || offset + 2 + length + 8 + 32 > object_bytes) {
      return refuse("bad name length " + std::to_string(length) + " in the file table");
    }
    Row row;
    row.name.resize(length);
    unsigned char rest[8 + 32];
    if (!read_exact(fd.get(), row.name.data(), length) ||
        !read_exact(fd.get(), rest, sizeof rest)) {
      return refuse("truncated file table");
    }
    whole.update(length_bytes, 2);
    whole.update(row.name);
    whole.update(rest, sizeof rest);
    offset += 2 + length + sizeof rest;
    if (!(is_plain_file_name(row.name) || row.name == k_header_file) ||
        row.name.find("..") != std::string::npos) {
      return refuse("refused file name \"" + row.name + "\"");
    }
    for (const auto& seen : rows) {
      if (seen.name == row.name) {
        return refuse("file \"" + row.name + "\" appears twice");
      }
    }
    has_header = has_header || row.name == k_header_file;
    row.size = get_uint(rest, 8);
    row.sha256 = hex_from_raw(rest + 8, 32);
    if (row.size > object_bytes || payload + row.size > object_bytes) {
      return refuse("truncated: " + row.name + " has " + std::to_string(row.size) +
                    " bytes, more than the object's " + std::to_string(object_bytes));
    }
    payload += row.size;
    rows.push_back(std::move(row));
  }
  if (!has_header) {
    return refuse(std::string("no ") + k_header_file + " in the bundle");
  }
  if (offset + payload + k_digest_bytes != object_bytes) {
    return refuse("object has " + std::to_string(object_bytes) + " bytes, its table describes " +
                  std::to_string(offset + payload + k_digest_bytes) +
                  (object_bytes < offset + payload + k_digest_bytes ? " (truncated)" : ""));
  }
  std::string buffer(k_chunk, '\0');
  for (const auto& row : rows) {
    fs::path path = into / row.name;
    Fd out(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644));
    if (out.get() < 0) {
      return refuse(path.string() + ": cannot create: " + std::strerror(errno));
    }
    util::Sha256 file_hash;
    uint64_t left = row.size;
    while (left > 0) {
      size_t want = static_cast<size_t>(std::min<uint64_t>(left, buffer.size()));
      if (!read_exact(fd.get(), buffer.data(), want)) {
        return refuse(row.name + ": truncated");
      }
      whole.update(buffer.data(), want);
      file_hash.update(buffer.data(), want);
      try {
        util::write_all(out.get(), buffer.data(), want, path);
      } catch (const Error& e) {
        return refuse(e.what());
      }
      left -= want;
    }
    if (::close(out.release()) != 0) {
      return refuse(path.string() + ": cannot write: " + std::strerror(errno));
    }
    if (file_hash.hex_digest() != row.sha256) {
      return refuse(row.name + " does not match its checksum");
    }
    result.names.push_back(row.name);
  }
  unsigned char digest[k_digest_bytes];
  if (!read_exact(fd.get(), digest, sizeof digest)) {
    return refuse("truncated digest");
  }
  if (whole.hex_digest() != hex_from_raw(digest, sizeof digest)) {
    return refuse("the bundle does not match its digest");
  }
  result.ok = true;
  return result;
}

} // namespace npucc::cache::remote
