#include "passes/deduplicate_initializers.h"

#include "model/weight_store.h"
#include "passes/rename.h"
#include "util/eintr.h"
#include "util/fd.h"
#include "util/mapped_file.h"

#include <cstring>
#include <optional>
#include <string_view>
#include <unordered_map>

namespace npucc::passes {

namespace {

template <typename Field> std::string_view bytes_of(const Field& field) {
  return {reinterpret_cast<const char*>(field.data()),
          static_cast<size_t>(field.size()) * sizeof(*field.data())};
}

size_t combine(size_t seed, size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

// Only buckets candidates (same_tensor compares every byte), so large data is sampled:
// its size and three 16 KiB windows. Distinct weights then cost no full pass over their
// bytes; duplicates pay one memcmp.
constexpr size_t k_window = 16 * 1024;

size_t hash_bytes(std::string_view bytes) {
  std::hash<std::string_view> hash;
  if (bytes.size() <= 4 * k_window) {
    return hash(bytes);
  }
  size_t seed = std::hash<size_t>()(bytes.size());
  seed = combine(seed, hash(bytes.substr(0, k_window)));
  seed = combine(seed, hash(bytes.substr(bytes.size() / 2 - k_window / 2, k_window)));
  return combine(seed, hash(bytes.substr(bytes.size() - k_window)));
}

// hash_bytes of a slice of a mapped file, its windows read with pread: touching the
// mapping would map each window's whole page-cache folio (a megabyte or more on kernels
// with large folios), three per weight. nullopt when a read fails.
std::optional<size_t> hash_mapped(const model::MappedSlice& slice) {
  if (slice.length <= 4 * k_window) {
    return std::nullopt; // small: hashed whole, from the mapping
  }
  int fd = slice.file->read_fd();
  std::string windows(3 * k_window, '\0');
  const uint64_t starts[3] = {0, slice.length / 2 - k_window / 2, slice.length - k_window};
  std::hash<std::string_view> hash;
  size_t seed = std::hash<size_t>()(static_cast<size_t>(slice.length));
  for (int i = 0; i < 3; ++i) {
    char* window = windows.data() + i * k_window;
    if (util::pread_full(fd, window, k_window, slice.offset + starts[i]) !=
        static_cast<ssize_t>(k_window)) {
      return std::nullopt;
    }
    seed = combine(seed, hash(std::string_view(window, k_window)));
  }
  return seed;
}

size_t hash_raw(const onnx::TensorProto& tensor) {
  // Typed values (typed_data.h) would be decoded into memory to be hashed: each is taken
  // as unlike any other (their place in the file), so such weights are not merged.
  if (auto typed = model::typed_slice(tensor)) {
    return combine(std::hash<const void*>()(typed->file.get()),
                   std::hash<uint64_t>()(typed->values.begin));
  }
  if (auto slice = model::mapped_slice(tensor)) {
    if (auto hashed = hash_mapped(*slice)) {
      return *hashed;
    }
  }
  return hash_bytes(model::raw_bytes(tensor).value_or(std::string_view()));
}

size_t hash_tensor(const onnx::TensorProto& tensor) {
  auto hash = hash_bytes;
  size_t seed = std::hash<int32_t>()(tensor.data_type());
  for (int64_t dim : tensor.dims()) {
    seed = combine(seed, std::hash<int64_t>()(dim));
  }
  seed = combine(seed, hash_raw(tensor));
  seed = combine(seed, hash(bytes_of(tensor.float_data())));
  seed = combine(seed, hash(bytes_of(tensor.int32_data())));
  seed = combine(seed, hash(bytes_of(tensor.int64_data())));
  seed = combine(seed, hash(bytes_of(tensor.double_data())));
  seed = combine(seed, hash(bytes_of(tensor.uint64_data())));
  for (const auto& text : tensor.string_data()) {
    seed = combine(seed, hash(text));
  }
  return seed;
}

std::string unknown_fields_of(const onnx::TensorProto& tensor) {
  std::string bytes;
  const auto& fields = tensor.GetReflection()->GetUnknownFields(tensor);
  if (!fields.empty()) {
    fields.SerializeToString(&bytes);
  }
  return bytes;
}

// Bitwise equality of what is stored (so -0.0 and 0.0, or two NaN payloads, differ).
bool same_tensor(const onnx::TensorProto& a, const onnx::TensorProto& b) {
  if (model::typed_slice(a) || model::typed_slice(b)) {
    return false; // hash_raw: not merged
  }
  if (a.data_type() != b.data_type() || bytes_of(a.dims()) != bytes_of(b.dims()) ||
      model::raw_bytes(a).value_or(std::string_view()) !=
          model::raw_bytes(b).value_or(std::string_view()) ||
      bytes_of(a.float_data()) != bytes_of(b.float_data()) ||
      bytes_of(a.int32_data()) != bytes_of(b.int32_data()) ||
      bytes_of(a.int64_data()) != bytes_of(b.int64_data()) ||
      bytes_of(a.double_data()) != bytes_of(b.double_data()) ||
      bytes_of(a.uint64_data()) != bytes_of(b.uint64_data()) ||
      a.string_data_size() != b.string_data_size()) {
    return false;
  }
  for (int i = 0; i < a.string_data_size(); ++i) {
    if (a.string_data(i) != b.string_data(i)) {
      return false;
    }
  }
  // Fields the ONNX 1.12 protobuf does not know (metadata_props of IR 10) would be lost
  // with the tensor merged away: only tensors that carry the same ones merge.
  return unknown_fields_of(a) == unknown_fields_of(b);
}

// Tensors whose bytes live elsewhere or in pieces are not compared.
bool comparable(const onnx::TensorProto& tensor) {
  if (model::is_stored(tensor)) {
    return !tensor.has_segment();
  }
  return tensor.data_location() != onnx::TensorProto::EXTERNAL && !tensor.has_segment() &&
         tensor.external_data_size() == 0;
}

} // namespace

int64_t DeduplicateInitializers::run_on_graph(onnx::GraphProto& graph,
                                              const GraphContext& /*context*/) {
  std::unordered_set<std::string> interface;
  for (const auto& value : graph.input()) {
    interface.insert(value.name());
  }
  for (const auto& value : graph.output()) {
    interface.insert(value.name());
  }
  const NestedNames nested = nested_names(graph);
  std::unordered_map<size_t, std::vector<int>> kept_by_hash;
  std::unordered_map<std::string, std::string> renames;
  std::vector<bool> merged(static_cast<size_t>(graph.initializer_size()), false);
  for (int i = 0; i < graph.initializer_size(); ++i) {
    const auto& tensor = graph.initializer(i);
    if (interface.count(tensor.name()) != 0 || !comparable(tensor)) {
      continue;
    }
    auto& candidates = kept_by_hash[hash_tensor(tensor)];
    bool done = false;
    for (int k : candidates) {
      const auto& kept = graph.initializer(k);
      if (same_tensor(tensor, kept) && can_redirect(nested, tensor.name(), kept.name())) {
        renames.emplace(tensor.name(), kept.name());
        merged[static_cast<size_t>(i)] = true;
        done = true;
        break;
      }
    }
    if (!done) {
      candidates.push_back(i);
    }
  }
  if (renames.empty()) {
    return 0;
  }
  rename_reads(graph, renames);
  auto* tensors = graph.mutable_initializer();
  int kept = 0;
  for (int i = 0; i < tensors->size(); ++i) {
    if (!merged[static_cast<size_t>(i)]) {
      if (kept != i) {
        tensors->SwapElements(kept, i);
      }
      ++kept;
    }
  }
  while (tensors->size() > kept) {
    tensors->RemoveLast();
  }
  std::unordered_set<std::string> gone;
  for (const auto& entry : renames) {
    gone.insert(entry.first);
  }
  drop_value_info(graph, gone);
  return static_cast<int64_t>(renames.size());
}

} // namespace npucc::passes
