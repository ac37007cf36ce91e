#include "util/build_identity.h"

#include "util/hex.h"
#include "util/sha256.h"

#include <algorithm>
#include <cstring>
#include <elf.h>
#include <link.h>
#include <string_view>
#include <vector>

namespace npucc::util {

namespace {

// The NT_GNU_BUILD_ID note of a loaded object, hex; "" when it has none.
std::string build_id_of(const dl_phdr_info& info) {
  for (int i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr)& header = info.dlpi_phdr[i];
    if (header.p_type != PT_NOTE) {
      continue;
    }
    const auto* at = reinterpret_cast<const unsigned char*>(info.dlpi_addr + header.p_vaddr);
    const unsigned char* end = at + header.p_memsz;
    while (at + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) note;
      std::memcpy(&note, at, sizeof note);
      const unsigned char* name = at + sizeof note;
      const unsigned char* desc = name + ((note.n_namesz + 3) & ~3U);
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
          std::memcmp(name, "GNU", 4) == 0 && desc + note.n_descsz <= end) {
        return hex_encode(desc, note.n_descsz);
      }
      at = desc + ((note.n_descsz + 3) & ~3U);
    }
  }
  return "";
}

struct Found {
  std::vector<std::string> parts;
  bool found_npucc = false;
};

// Whether the object holds npucc's own code: the executable for the CLI and programs that
// link the static library, the extension module for Python (whose executable is python3,
// which says nothing of the compiler inside it).
bool holds_npucc(const dl_phdr_info& info) {
  const auto here = reinterpret_cast<ElfW(Addr)>(&build_identity);
  for (int i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr)& header = info.dlpi_phdr[i];
    const ElfW(Addr) start = info.dlpi_addr + header.p_vaddr;
    if (header.p_type == PT_LOAD && here >= start && here < start + header.p_memsz) {
      return true;
    }
  }
  return false;
}

int visit(dl_phdr_info* info, size_t, void* data) {
  auto* found = static_cast<Found*>(data);
  std::string_view path = info->dlpi_name != nullptr ? info->dlpi_name : "";
  bool program = !found->found_npucc && holds_npucc(*info);
  std::string_view base =
      path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1);
  if (!program && base.rfind("libonnx", 0) != 0) {
    return 0;
  }
  std::string id = build_id_of(*info);
  if (id.empty()) {
    try {
      id = "sha256:" + sha256_file_hex(path.empty() ? "/proc/self/exe" : std::string(path));
    } catch (const std::exception&) {
      id = "unknown"; // unreadable: the version alone tells builds apart
    }
  }
  std::string part = std::string(program ? "npucc" : base) + "=" + id;
  if (program) {
    found->found_npucc = true;
    found->parts.insert(found->parts.begin(), part); // first, as the sort below expects
  } else {
    found->parts.push_back(part);
  }
  return 0;
}

} // namespace

const std::string& build_identity() {
  static const std::string identity = [] {
    Found found;
    dl_iterate_phdr(visit, &found);
    std::sort(found.parts.begin() + (found.found_npucc ? 1 : 0), found.parts.end());
    std::string out;
    for (const auto& part : found.parts) {
      out += (out.empty() ? "" : " ") + part;
    }
    return out;
  }();
  return identity;
}

} // namespace npucc::util
