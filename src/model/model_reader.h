#pragma once

#include "model/weight_store.h"
#include "npucc/file_identity.h"
#include "npucc/model.h"

#include <filesystem>
#include <optional>
#include <string>

namespace npucc::model {

// read_model(path, limits, Weights::in_table): the file is mapped and every large
// tensor's bytes (initializers, Constant values, typed fields; with
// TableScope::initializers, the initializers' raw data only), embedded
// (embedded_weights.h) or external, stay in the mapping.
// `inputs`: the files a caller opened already (the cache's lookup hashes the model file
// first, util/input_file.h); the model's store keeps them (input_files()), and the
// files opened here join them. A file whose digest the caller knows is not hashed again.
// ModelDigest::later leaves Model::sha256 empty unless it is known: the caller hashes the
// model file in a read it makes anyway (util::InputScan), beside the compile.
enum class ModelDigest { now, later };
Model read_mapped_model(const std::filesystem::path& path, const ReadLimits& limits,
                        std::shared_ptr<util::InputFiles> inputs = nullptr,
                        TableScope scope = TableScope::every_tensor,
                        ModelDigest digest = ModelDigest::now);

// parse_model into `model`, whose weight store (and so its input files) it keeps.
Model parse_into(Model model, const std::string& bytes, const std::filesystem::path& path,
                 const ReadLimits& limits, Weights weights);

// The scope of the table `weights` asks for (in_proto: none, as initializers).
TableScope table_scope(Weights weights);

} // namespace npucc::model
