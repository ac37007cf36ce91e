#pragma once

#include "model/weight_store.h"
#include "npucc/model.h"
#include "util/expected.h"

#include <filesystem>
#include <vector>

namespace npucc::model {

// Resolves every tensor stored as external data (ONNX's location/offset/length keys).
// Each file is mapped once; large initializers (with TableScope::every_tensor, all large
// tensors) become references into `store` (no copy) when `store` is given; other tensors
// get their bytes in raw_data. A location must be relative and stay inside the
// model's folder: absolute paths, ".." components and symlinks that lead outside are
// refused, as are ranges past the end of the file. Returns the files used.
std::vector<ExternalFile> load_external_data(onnx::ModelProto& proto,
                                             const std::filesystem::path& model_path,
                                             const ReadLimits& limits, uint64_t already_loaded,
                                             WeightStore* store,
                                             TableScope scope = TableScope::initializers);

// Checks a location string and resolves it inside `folder`; the npucc::Error naming
// `model_file` and the tensor when it escapes or does not exist.
util::Expected<std::filesystem::path>
try_resolve_external_location(const std::string& location, const std::filesystem::path& folder,
                              const std::string& model_file, const std::string& tensor_name);
// try_resolve_external_location, throwing its error.
std::filesystem::path resolve_external_location(const std::string& location,
                                                const std::filesystem::path& folder,
                                                const std::string& model_file,
                                                const std::string& tensor_name);

} // namespace npucc::model
