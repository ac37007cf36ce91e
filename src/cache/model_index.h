#pragma once


#include <optional>
#include <string>
#include <vector>

// The external data locations a model refers to, as recorded by a store
// (CACHE_DIR/models/<kk>/<model sha256>, local_storage.h). The locations are a function of
// the model's bytes, so a hit can resolve them inside the model's folder with the same
// checks as read_model and skip parsing the model: hashing it is enough.
//
//   index = "npucc-model-index 1" LF *("external" SP location LF)
namespace npucc::cache {

// `external_locations`: as the model writes them (ExternalFile::location), in any order.
std::string serialize_model_index(const std::vector<std::string>& external_locations);
// nullopt when the text is not an index.
std::optional<std::vector<std::string>> parse_model_index(const std::string& text);

} // namespace npucc::cache
