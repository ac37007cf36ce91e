#include "model/model_reader.h"

#include "model/embedded_weights.h"
#include "model/external_data.h"
#include "model/model_checks.h"
#include "model/nesting_scan.h"
#include "model/weight_store.h"
#include "npucc/error.h"
#include "npucc/model.h"
#include "util/file_digest.h"
#include "util/file_io.h"
#include "util/mapped_file.h"
#include "util/sha256.h"

#include <google/protobuf/io/coded_stream.h>
#include <utility>

namespace npucc {

namespace {

namespace fs = std::filesystem;

// Subgraphs nest through messages (graph, node, attribute: three per level), so this
// lets a model nest deeper than ReadLimits allows and be refused with a clear message
// by check_nesting; parsing itself stays far from exhausting the stack.
constexpr int k_protobuf_recursion_limit = 1024;

bool parse_bytes(std::string_view bytes, onnx::ModelProto& proto) {
  google::protobuf::io::CodedInputStream stream(reinterpret_cast<const uint8_t*>(bytes.data()),
                                                static_cast<int>(bytes.size()));
  stream.SetRecursionLimit(k_protobuf_recursion_limit);
  return proto.ParseFromCodedStream(&stream) && stream.ConsumedEntireMessage();
}

[[noreturn]] void refuse_unparsable(std::string_view bytes, const std::string& file,
                                    const ReadLimits& limits) {
  // Too deep for the parser: say so precisely rather than "corrupt".
  int depth = model::scan_subgraph_depth(bytes, limits.max_subgraph_depth);
  if (depth > limits.max_subgraph_depth) {
    throw Error(file + ": subgraphs are nested more than " +
                    std::to_string(limits.max_subgraph_depth) + " levels deep",
                "the model is damaged or hostile; real models nest a few levels");
  }
  throw Error(file + ": not a valid ONNX protobuf (truncated, corrupt, nested too deeply, "
                     "or not an ONNX file)");
}

void refuse_empty(uint64_t size, const std::string& file) {
  if (size == 0) {
    throw Error(file + ": file is empty; expected an ONNX model (protobuf)");
  }
}

// Refuses what is not a regular file, and a file too large, before reading a byte.
void check_before_reading(const fs::path& path, const ReadLimits& limits) {
  std::error_code ec;
  auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) {
    throw Error(path.string() + ": no such file", "check the model path");
  }
  if (!fs::is_regular_file(status)) {
    throw Error(path.string() + ": not a regular file; expected an .onnx model");
  }
  uint64_t size = fs::file_size(path, ec);
  if (!ec) {
    model::check_file_size(size, path.string(), limits);
  }
}

// The SHA-256 of the model file's bytes: known already when the cache's lookup hashed this
// very open file and nothing wrote to it since (its stamp is as it was opened), else read
// and hashed now, through pread() rather than the mapping (whose pages would then count as
// the process's memory): util::file_digest, as the key takes an input's digest.
std::string digest_of(const std::shared_ptr<util::InputFile>& file) {
  return util::file_digest(file).value();
}

// The large tensors of a parsed skeleton become slices of the mapped file; the rest as
// parse_model does.
void finish_mapped(Model& model, const model::Skeleton& skeleton,
                   const std::shared_ptr<const util::MappedFile>& file, const ReadLimits& limits,
                   model::TableScope scope) {
  const std::string name = model.path.string();
  std::vector<model::LeftOutWeight> left_out = model::take_left_out(model.proto, skeleton, name);
  model::LeftOutBytes sizes;
  for (const auto& weight : left_out) {
    sizes[weight.tensor] = weight.slice.raw_length();
  }
  model::check_structure(model.proto, name, limits, sizes);
  model::WeightStore& store = model::ensure_weight_store(model);
  model.external_files =
      model::load_external_data(model.proto, model.path, limits, model.file_bytes, &store, scope);
  model::adopt_left_out(left_out, file, store);
  store.adopt_initializers(*model.proto.mutable_graph());
}

} // namespace

Model parse_model(const std::string& bytes, const fs::path& path, const ReadLimits& limits,
                  Weights weights) {
  return model::parse_into(Model(), bytes, path, limits, weights);
}

namespace model {

Model parse_into(Model model, const std::string& bytes, const fs::path& path,
                 const ReadLimits& limits, Weights weights) {
  const std::string file = path.string();
  refuse_empty(bytes.size(), file);
  model::check_file_size(bytes.size(), file, limits);
  model.path = path;
  model.file_bytes = bytes.size();
  model.sha256 = util::sha256_hex(bytes);
  if (!parse_bytes(bytes, model.proto)) {
    refuse_unparsable(bytes, file, limits);
  }
  model::check_structure(model.proto, file, limits);
  model::WeightStore* store =
      weights != Weights::in_proto ? &model::ensure_weight_store(model) : nullptr;
  model.external_files = model::load_external_data(model.proto, path, limits, bytes.size(), store,
                                                   model::table_scope(weights));
  if (store != nullptr) {
    store->adopt_initializers(*model.proto.mutable_graph());
  }
  return model;
}

} // namespace model

Model read_model(const fs::path& path, const ReadLimits& limits, Weights weights) {
  if (weights != Weights::in_proto) {
    return model::read_mapped_model(path, limits, nullptr, model::table_scope(weights));
  }
  check_before_reading(path, limits);
  return parse_model(util::read_file(path), path, limits, weights);
}

namespace model {

TableScope table_scope(Weights weights) {
  return weights == Weights::in_proto ? TableScope::initializers : TableScope::every_tensor;
}

Model read_mapped_model(const fs::path& path, const ReadLimits& limits,
                        std::shared_ptr<util::InputFiles> inputs, TableScope scope,
                        ModelDigest digest) {
  check_before_reading(path, limits);
  if (!inputs) {
    inputs = std::make_shared<util::InputFiles>();
  }
  std::shared_ptr<util::InputFile> input = inputs->open(path, util::InputFile::Links::follow);
  auto file = util::MappedFile::map(input);
  std::string_view bytes = file->bytes();
  refuse_empty(bytes.size(), path.string());
  model::check_file_size(bytes.size(), path.string(), limits);
  WireSource source(input->fd(), bytes.size());
  std::optional<Skeleton> skeleton =
      cut_embedded_weights(source, limits.max_subgraph_depth, scope, limits.max_tensor_bytes);
  Model model;
  ensure_weight_store(model).share_inputs(inputs);
  if (!skeleton || !parse_bytes(skeleton->bytes, model.proto)) {
    // Not the plain shape the cut follows: the whole file, whose errors say what is wrong.
    model.proto.Clear();
    return parse_into(std::move(model), std::string(bytes), path, limits,
                      scope == TableScope::every_tensor ? Weights::all_in_table
                                                        : Weights::in_table);
  }
  model.path = path;
  model.file_bytes = bytes.size();
  if (digest == ModelDigest::now || input->sha256()) {
    model.sha256 = digest_of(input);
  }
  finish_mapped(model, *skeleton, file, limits, scope);
  return model;
}

} // namespace model

} // namespace npucc
