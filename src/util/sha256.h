#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace npucc::util {

// Incremental SHA-256 (OpenSSL EVP).
class Sha256 {
public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(const void* data, size_t size);
  void update(std::string_view data) { update(data.data(), data.size()); }
  // Lower-case hex digest; the object cannot be updated afterwards.
  std::string hex_digest();

private:
  struct State;
  std::unique_ptr<State> m_state;
};

std::string sha256_hex(std::string_view data);
std::string sha256_file_hex(const std::filesystem::path& path);

} // namespace npucc::util
