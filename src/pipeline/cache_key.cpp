#include "pipeline/cache_key.h"

#include "cache/file_ops.h"
#include "compiler/key_options.h"
#include "npucc/error.h"
#include "npucc/version.h"
#include "precision/prescan_reader.h"
#include "util/build_identity.h"
#include "util/eintr.h"
#include "util/fd.h"
#include "util/file_stamp.h"
#include "util/sha256.h"
#include "util/strings.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <thread>
#include <unistd.h>

namespace npucc::pipeline {

namespace {

std::vector<std::pair<std::string, std::filesystem::path>>
sorted_external(std::vector<std::pair<std::string, std::filesystem::path>> external) {
  std::sort(external.begin(), external.end());
  external.erase(std::unique(external.begin(), external.end()), external.end());
  return external;
}

// The key, given each external file's digest and size (in sorted_external order).
CacheKey key_from(const ModelIdentity& model, const compiler::KeyOptions& options,
                  const std::vector<std::pair<std::string, std::filesystem::path>>& external,
                  const std::vector<std::string>& digests, uint64_t external_bytes) {
  CacheKey key;
  key.components.push_back({"format", util::sha256_hex(k_key_salt), k_key_salt});
  key.components.push_back({"compiler", util::sha256_hex(k_version), k_version});
  // Two builds of one version may emit different bytes (another ONNX, a fix between
  // releases): they never share an entry.
  const std::string& build = util::build_identity();
  key.components.push_back({"build", util::sha256_hex(build), build});
  key.components.push_back(
      {"model", model.sha256, model.file_name + ", " + std::to_string(model.bytes) + " bytes"});
  util::Sha256 external_hash;
  for (size_t i = 0; i < external.size(); ++i) {
    external_hash.update(external[i].first + "\n" + digests[i] + "\n");
  }
  key.components.push_back(
      {"external", external_hash.hex_digest(),
       std::to_string(external.size()) + " file(s), " + std::to_string(external_bytes) + " bytes"});

  key.components.push_back({"options", util::sha256_hex(options.canonical), options.canonical});
  key.not_in_key = options.not_in_key;

  std::string text = "npucc-cache-key\n";
  for (const auto& component : key.components) {
    text += component.name + ":" + component.digest + "\n";
  }
  key.key = util::sha256_hex(text);
  return key;
}

// An external data file's digest through the digest cache.
std::string external_digest(const std::filesystem::path& path, cache::InputDigests& digests) {
  util::Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    throw Error(path.string() + ": cannot open: " + std::strerror(errno));
  }
  std::optional<cache::InputDigest> digest = digests.digest(fd.get(), path);
  if (!digest) {
    throw Error(path.string() + ": changed while npucc read it for the cache key",
                "compile again once nothing writes to it");
  }
  return digest->sha256;
}

ModelIdentity identity_of(const Model& model) {
  ModelIdentity identity;
  identity.file_name = model.path.filename().string();
  identity.bytes = model.file_bytes;
  identity.sha256 = model.sha256;
  for (const auto& file : model.external_files) {
    identity.external.emplace_back(file.location, file.path);
  }
  return identity;
}

CacheKey key_of(const ModelIdentity& model, const compiler::KeyOptions& options,
                cache::InputDigests* digests) {
  auto external = sorted_external(model.external);
  std::vector<std::string> sha256;
  uint64_t external_bytes = 0;
  for (const auto& [location, path] : external) {
    sha256.push_back(digests ? external_digest(path, *digests) : util::sha256_file_hex(path));
    external_bytes += std::filesystem::file_size(path);
  }
  return key_from(model, options, external, sha256, external_bytes);
}

} // namespace

CacheKey compute_key(const Model& model, const CompileOptions& options,
                     cache::InputDigests* digests) {
  return key_of(identity_of(model), compiler::key_options(options, &model.proto), digests);
}

CacheKey compute_key(const ModelIdentity& model, const CompileOptions& options,
                     cache::InputDigests* digests) {
  return key_of(model, compiler::key_options(options, nullptr), digests);
}

constexpr size_t k_read_size = 1 << 20;

struct KeyHashing::Job {
  ModelIdentity model;
  compiler::KeyOptions options;
  std::vector<std::pair<std::string, std::filesystem::path>> external;
  std::vector<util::Fd> files;
  std::vector<std::unique_ptr<util::Sha256>> hashes;
  std::vector<uint64_t> bytes;
  std::vector<int> errors;        // errno of a failed read, per file
  std::unique_ptr<char[]> buffer; // k_read_size bytes, filled by read() (not zeroed)
  // Counts float overflows in the chunks read (see precision/overflow_prescan.h).
  std::unique_ptr<precision::OverflowPrescan> prescan;
  std::vector<int> prescan_files; // per external file: its index in prescan, or -1
  // Files whose weights the prescan counts that are not hashed here: the model file's own
  // initializers (embedded weights, model/embedded_weights.h), read for the counts alone.
  std::vector<std::pair<util::Fd, int>> count_only;
  // For recording the external files' digests: their stamps and the clock before the first
  // byte was read.
  cache::InputDigests* digests = nullptr;
  std::vector<util::FileStamp> stamps;
  int64_t started_ns = 0;
  std::thread thread;
};

void KeyHashing::read_files(Job& job) {
  for (size_t i = 0; i < job.files.size(); ++i) {
    while (true) {
      ssize_t n = util::read_some(job.files[i].get(), job.buffer.get(), k_read_size);
      if (n <= 0) {
        job.errors[i] = n < 0 ? errno : 0;
        break;
      }
      job.hashes[i]->update(job.buffer.get(), static_cast<size_t>(n));
      job.prescan->feed(job.prescan_files[i], job.bytes[i],
                        std::string_view(job.buffer.get(), static_cast<size_t>(n)));
      job.bytes[i] += static_cast<uint64_t>(n);
    }
  }
  for (auto& [fd, file] : job.count_only) {
    precision::feed_file(*job.prescan, file, fd.get(), job.buffer.get(), k_read_size);
  }
  job.prescan->end();
}

KeyHashing::KeyHashing(const Model& model, const CompileOptions& options, HashOn where,
                       cache::InputDigests* digests)
    : m_job(std::make_unique<Job>()) {
  Job& job = *m_job;
  job.model = identity_of(model);
  job.options = compiler::key_options(options, &model.proto);
  job.external = sorted_external(job.model.external);
  for (const auto& entry : job.external) {
    const auto& path = entry.second;
    job.files.emplace_back(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (job.files.back().get() < 0) {
      throw Error(path.string() + ": cannot open: " + std::strerror(errno));
    }
    job.hashes.push_back(std::make_unique<util::Sha256>());
    job.stamps.push_back(util::stamp_of(job.files.back().get()).value_or(util::FileStamp{}));
  }
  job.digests = digests;
  job.started_ns = util::realtime_ns();
  job.bytes.assign(job.external.size(), 0);
  job.errors.assign(job.external.size(), 0);
  job.buffer.reset(new char[k_read_size]);
  job.prescan = std::make_unique<precision::OverflowPrescan>(model.proto);
  for (const auto& entry : job.external) {
    job.prescan_files.push_back(job.prescan->file_index(entry.second));
  }
  std::vector<std::filesystem::path> hashed;
  for (const auto& entry : job.external) {
    hashed.push_back(entry.second);
  }
  job.count_only = precision::open_prescan_files(*job.prescan, hashed);
  if (where == HashOn::this_thread) {
    read_files(job);
    return;
  }
  // Only read(), SHA-256 updates and counting from here on: no allocation, no lock.
  job.thread = std::thread([&job] { read_files(job); });
}

KeyHashing::~KeyHashing() {
  if (m_job && m_job->thread.joinable()) {
    m_job->thread.join();
  }
}

precision::OverflowSource KeyHashing::overflow(precision::OverflowAssumption* assumption) const {
  return {m_job->prescan.get(), assumption};
}

CacheKey KeyHashing::get() {
  Job& job = *m_job;
  if (job.thread.joinable()) {
    job.thread.join();
  }
  std::vector<std::string> digests;
  uint64_t total = 0;
  for (size_t i = 0; i < job.external.size(); ++i) {
    if (job.errors[i] != 0) {
      throw Error(job.external[i].second.string() +
                  ": read failed: " + std::strerror(job.errors[i]));
    }
    digests.push_back(job.hashes[i]->hex_digest());
    total += job.bytes[i];
    if (job.digests) {
      job.digests->record(job.files[i].get(), job.stamps[i], job.started_ns, digests.back(),
                          "read by the compile");
    }
  }
  return key_from(job.model, job.options, job.external, digests, total);
}

} // namespace npucc::pipeline
