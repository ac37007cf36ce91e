#pragma once

#include "model/weight_store.h"
#include "npucc/file_identity.h"
#include "npucc/model.h"

#include <filesystem>
#include <optional>
#include <string>

namespace npucc::model {

// A model file's SHA-256 as a caller computed it, and the file as it was then.
struct PriorDigest {
  std::string sha256;
  FileIdentity identity;
};

// read_model(path, limits, Weights::in_table): the file is mapped and every large
// tensor's bytes (initializers, Constant values, typed fields; with
// TableScope::initializers, the initializers' raw data only), embedded
// (embedded_weights.h) or external, stay in the mapping.
// `prior` spares hashing the file again when it still is the file that was hashed.
Model read_mapped_model(const std::filesystem::path& path, const ReadLimits& limits,
                        const std::optional<PriorDigest>& prior,
                        TableScope scope = TableScope::every_tensor);

// The scope of the table `weights` asks for (in_proto: none, as initializers).
TableScope table_scope(Weights weights);

} // namespace npucc::model
