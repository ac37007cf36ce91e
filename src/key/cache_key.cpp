#include "key/cache_key.h"

#include "accuracy/checked.h"
#include "key/input_digest.h"
#include "model/weight_store.h"
#include "npucc/error.h"
#include "npucc/version.h"
#include "runtime/ort_session.h"
#include "util/build_identity.h"
#include "util/sha256.h"

#include <algorithm>

namespace npucc::key {

namespace {

std::vector<std::pair<std::string, std::filesystem::path>>
sorted_external(std::vector<std::pair<std::string, std::filesystem::path>> external) {
  std::sort(external.begin(), external.end());
  external.erase(std::unique(external.begin(), external.end()), external.end());
  return external;
}

// The key of the identity and the options as the key sees them.
CacheKey key_from(const ModelIdentity& model, const KeyOptions& options,
                  const KeyDigests& digests) {
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
  for (const auto& [location, sha256] : digests.external) {
    external_hash.update(location + "\n" + sha256 + "\n");
  }
  key.components.push_back({"external", external_hash.hex_digest(),
                            std::to_string(digests.external.size()) + " file(s), " +
                                std::to_string(digests.external_bytes) + " bytes"});

  key.components.push_back({"options", util::sha256_hex(options.canonical), options.canonical});
  key.not_in_key = options.not_in_key;

  std::string text = "npucc-cache-key\n";
  for (const auto& component : key.components) {
    text += component.name + ":" + component.digest + "\n";
  }
  key.key = util::sha256_hex(text);
  return key;
}

// The model's input files, open since it was read; opened here for a model read another
// way (Weights::in_proto).
std::shared_ptr<util::InputFiles> inputs_of(const Model& model) {
  std::shared_ptr<util::InputFiles> inputs = model::input_files(model);
  return inputs ? inputs : std::make_shared<util::InputFiles>();
}

// An external data file, open once: resolved inside the model's folder already, so a link
// in its last component now was put there since.
std::shared_ptr<util::InputFile> open_external(util::InputFiles& inputs,
                                               const std::filesystem::path& path) {
  return inputs.open(path, util::InputFile::Links::refuse);
}

ModelIdentity identity_of(const Model& model) {
  ModelIdentity identity;
  identity.file_name = model.path.filename().string();
  identity.bytes = model.file_bytes;
  identity.sha256 = model.sha256;
  for (const auto& file : model.external_files) {
    identity.external.emplace_back(file.location, file.path);
  }
  identity.facts = key_facts(model.proto);
  return identity;
}

// The digests of the identity's external files, found through `digests` (or hashed).
KeyDigests digests_of(const ModelIdentity& model, const CompileOptions& options,
                      cache::InputDigests* digests, util::InputFiles& inputs) {
  KeyDigests out;
  for (const auto& entry : sorted_external(model.external)) {
    std::shared_ptr<util::InputFile> file = open_external(inputs, entry.second);
    out.external.emplace_back(entry.first, digest_of_input(file, digests).value());
    out.external_bytes += file->stamp().size;
  }
  out.runtime = runtime_identity(options);
  return out;
}

// With an accuracy check the key holds the runtime library's SHA-256 (its identity,
// runtime::detail::library_identity): its digest comes through the digest cache as an input
// file's does, so a compile reads the 40 MB library only when its stamp changed. Without the
// digest cache (or when this fails) library_identity reads it itself, once per process.
void know_runtime_digest(const CompileOptions& options, cache::InputDigests* digests) {
  if (digests == nullptr || !accuracy::is_checked(options)) {
    return;
  }
  const std::filesystem::path library = runtime::detail::library_file();
  if (library.empty()) {
    return; // the key says it is missing
  }
  util::InputFiles files;
  auto file = files.try_open(library, util::InputFile::Links::refuse);
  if (!file) {
    return;
  }
  util::Expected<std::string> sha256 = digest_of_input(*file, digests);
  if (sha256) {
    runtime::detail::remember_library_digest((*file)->stamp(), *sha256);
  }
}

} // namespace

CacheKey key_of(const CompileOptions& request, const ModelIdentity& model,
                const KeyDigests& digests) {
  return key_from(model, key_options(request, model.facts ? &*model.facts : nullptr,
                                     digests.runtime),
                  digests);
}

CacheKey compute_key(const Model& model, const CompileOptions& options,
                     cache::InputDigests* digests) {
  know_runtime_digest(options, digests);
  const ModelIdentity identity = identity_of(model);
  return key_of(options, identity, digests_of(identity, options, digests, *inputs_of(model)));
}

CacheKey compute_key(const ModelIdentity& model, const CompileOptions& options,
                     cache::InputDigests* digests, util::InputFiles& inputs) {
  know_runtime_digest(options, digests);
  return key_of(options, model, digests_of(model, options, digests, inputs));
}

std::optional<CacheKey> key_without_reading(const ModelIdentity& model,
                                            const CompileOptions& options,
                                            const cache::InputDigests& digests,
                                            util::InputFiles& inputs) {
  KeyDigests known;
  for (const auto& entry : sorted_external(model.external)) {
    auto file = inputs.try_open(entry.second, util::InputFile::Links::refuse);
    std::optional<std::string> sha256 = file ? (*file)->sha256() : std::nullopt;
    if (file && !sha256) {
      cache::InputDigest recorded = digests.look_up((*file)->fd());
      if (recorded.from_stamp) {
        sha256 = recorded.sha256;
      }
    }
    if (!sha256) {
      return std::nullopt;
    }
    known.external.emplace_back(entry.first, *sha256);
    known.external_bytes += (*file)->stamp().size;
  }
  known.runtime = runtime_identity(options);
  return key_of(options, model, known);
}

KeyHashing::KeyHashing(const Model& model, const CompileOptions& options, HashOn where,
                       cache::InputDigests* digests, util::FileObserver* observer)
    : m_model(identity_of(model)), m_request(options),
      m_external(sorted_external(m_model.external)), m_digests(digests) {
  std::shared_ptr<util::InputFiles> inputs = inputs_of(model);
  std::vector<std::shared_ptr<const util::InputFile>> scanned;
  if (m_model.sha256.empty()) {
    m_model_file = inputs->find(model.path);
    if (!m_model_file) {
      throw Error("internal error: " + model.path.string() + " was read without its file");
    }
    m_model_stamp = m_model_file->stamp();
    m_why_model_hashed = digests ? digests->look_up(m_model_file->fd()).why_hashed : "";
    scanned.push_back(m_model_file);
  }
  for (const auto& entry : m_external) {
    m_files.push_back(open_external(*inputs, entry.second));
    scanned.push_back(m_files.back());
  }
  m_scan = std::make_unique<util::InputScan>(scanned, observer,
                                             where == HashOn::this_thread
                                                 ? util::InputScan::On::this_thread
                                                 : util::InputScan::On::second_thread);
}

KeyDigests KeyHashing::take_digests(const std::vector<util::InputScan::Hashed>& hashed) {
  const size_t first = m_model_file ? 1 : 0;
  if (m_model_file) {
    // A write while it was read: the digest may stand for no version of the file.
    if (util::stamp_of(m_model_file->fd()) != m_model_stamp) {
      throw Error(m_model_file->path().string() +
                      ": changed while npucc read it for the cache key",
                  "compile again once nothing writes to it");
    }
    m_model.sha256 = hashed.front().sha256;
    m_model_file->set_sha256(m_model.sha256);
    if (m_digests) {
      m_digests->record(m_model_file->fd(), m_model_stamp, m_scan->started_ns(), m_model.sha256,
                        m_why_model_hashed.empty() ? "read by the compile" : m_why_model_hashed);
    }
  }
  KeyDigests digests;
  for (size_t i = 0; i < m_files.size(); ++i) {
    const util::InputScan::Hashed& file = hashed[first + i];
    digests.external.emplace_back(m_external[i].first, file.sha256);
    digests.external_bytes += file.bytes;
    if (m_digests) {
      m_digests->record(m_files[i]->fd(), m_files[i]->stamp(), m_scan->started_ns(), file.sha256,
                        "read by the compile");
    }
  }
  return digests;
}

CacheKey KeyHashing::get() {
  KeyDigests digests = take_digests(m_scan->wait());
  digests.runtime = runtime_identity(m_request);
  return key_of(m_request, m_model, digests);
}

const std::string& KeyHashing::model_sha256() const {
  return m_model.sha256;
}

} // namespace npucc::key
