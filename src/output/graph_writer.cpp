#include "output/graph_writer.h"

#include "output/external_data_writer.h"
#include "output/hashed_file.h"
#include "output/message_stream.h"
#include "model/graph_files.h"
#include "model/graph_walk.h"
#include "model/weight_store.h"
#include "npucc/error.h"
#include "util/file_io.h"
#include "util/mapped_file.h"
#include "util/sha256.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace npucc::output {

namespace fs = std::filesystem;

// Named, not anonymous: GraphPairWriter::Plan, a type the header declares, holds two
// InlinePlans, and a type with linkage cannot hold one from an anonymous namespace (GCC's
// -Wsubobject-linkage, once this file is merged into a unity build's batch).
namespace layout {

// Leave headroom under protobuf's 2 GiB limit for the graph itself.
constexpr uint64_t k_inline_limit = (uint64_t{2} << 30) - (uint64_t{64} << 20);

// Wire-format tags (field number << 3 | length-delimited) of the fields streamed by hand.
constexpr char k_model_graph_tag = (7 << 3) | 2;
constexpr char k_graph_initializer_tag = (5 << 3) | 2;
constexpr char k_tensor_raw_data_tag = (9 << 3) | 2;

uint64_t stored_weight_bytes(onnx::ModelProto& model) {
  uint64_t total = 0;
  model::for_each_tensor(*model.mutable_graph(), [&](onnx::TensorProto& tensor) {
    if (model::is_stored(tensor)) {
      total += model::stored_size(tensor);
    }
  });
  return total;
}

// One initializer as the writer streams it: its message without raw_data (`head`),
// followed by the raw_data field from the weight table when it is a table reference.
struct Piece {
  std::string head;
  std::optional<StoredBytes> raw;

  uint64_t body_bytes() const {
    uint64_t body = head.size();
    if (raw) {
      body += 1 + varint(raw->size).size() + raw->size;
    }
    return body;
  }
  uint64_t field_bytes() const { return 1 + varint(body_bytes()).size() + body_bytes(); }
  uint64_t raw_bytes() const { return raw ? raw->size : 0; }

  // The same bytes in a file: same message, same weight bytes from the same place.
  bool same_as(const Piece& other) const {
    if (head != other.head || raw.has_value() != other.raw.has_value()) {
      return false;
    }
    return !raw || raw->same_as(*other.raw);
  }

  void write_to(HashedFile& file) const {
    file.write(std::string(1, k_graph_initializer_tag) + varint(body_bytes()));
    file.write(head);
    if (raw) {
      file.write(std::string(1, k_tensor_raw_data_tag) + varint(raw->size));
      write_stored(file, *raw);
    }
  }
};

// What an inline write streams, serialised up front: the graph's initializers (weights
// from the table, not copied), the graph's other fields (`rest`, whose stored tensors in
// subgraphs and Constant values are streamed from the table too) and the model's other
// fields (`head`). The model's top-level initializers are moved out while the plan lives
// and put back by its destructor, with any table references of sparse tensors, which are
// rare and copied into raw_data here.
class InlinePlan {
public:
  InlinePlan(onnx::ModelProto& model, const fs::path& path) : m_graph(*model.mutable_graph()) {
    m_initializers.Swap(m_graph.mutable_initializer());
    try {
      build(model, path);
    } catch (...) {
      put_back();
      throw;
    }
  }
  ~InlinePlan() { put_back(); }
  InlinePlan(const InlinePlan&) = delete;
  InlinePlan& operator=(const InlinePlan&) = delete;

  std::vector<Piece> pieces;
  MessageStream rest;
  std::string head;

  // The graph field's content without padding.
  uint64_t graph_bytes() const {
    uint64_t total = rest.size();
    for (const auto& piece : pieces) {
      total += piece.field_bytes();
    }
    return total;
  }

private:
  void build(onnx::ModelProto& model, const fs::path& path) {
    copy_stored_sparse();
    for (const auto& tensor : m_initializers) {
      Piece piece;
      if (model::is_stored(tensor)) {
        onnx::TensorProto meta = tensor;
        meta.clear_external_data();
        meta.clear_data_location();
        piece.head = meta.SerializeAsString();
        piece.raw = stored_bytes(tensor);
      } else {
        piece.head = tensor.SerializeAsString();
      }
      pieces.push_back(std::move(piece));
    }
    onnx::GraphProto* released = model.release_graph();
    bool ok = model.SerializeToString(&head);
    model.set_allocated_graph(released);
    if (!ok) {
      throw Error(path.string() + ": cannot serialise the graph");
    }
    rest = stream_graph(m_graph);
  }

  // Sparse tensors' values and indices are the one place stream_graph does not follow.
  void copy_stored_sparse() {
    std::unordered_set<const onnx::TensorProto*> dense;
    model::for_each_tensor(
        m_graph, [&](onnx::TensorProto& tensor) { dense.insert(&tensor); },
        model::SparseTensors::skip);
    model::for_each_tensor(m_graph, [&](onnx::TensorProto& tensor) {
      if (dense.count(&tensor) == 0 && model::is_stored(tensor)) {
        std::string bytes(*model::raw_bytes(tensor));
        m_nested.push_back(save_reference(tensor));
        tensor.set_raw_data(std::move(bytes));
      }
    });
  }

  void put_back() {
    for (auto& saved : m_nested) {
      saved.tensor->clear_raw_data();
    }
    restore_references(m_nested);
    if (!m_put_back) {
      m_initializers.Swap(m_graph.mutable_initializer());
      m_put_back = true;
    }
  }

  onnx::GraphProto& m_graph;
  google::protobuf::RepeatedPtrField<onnx::TensorProto> m_initializers;
  std::vector<SavedReference> m_nested;
  bool m_put_back = false;
};

const std::string k_padding_tag = varint((uint64_t{k_graph_padding_field} << 3) | 2);
const uint64_t k_padding_minimum = k_padding_tag.size() + 1;

// The file after the graph field's opening: the initializers not already written,
// the graph's other fields, the padding, then the model's other fields.
void write_rest(HashedFile& file, const InlinePlan& plan, const std::vector<bool>& written,
                uint64_t padding_bytes) {
  for (size_t i = 0; i < plan.pieces.size(); ++i) {
    if (!written[i]) {
      plan.pieces[i].write_to(file);
    }
  }
  plan.rest.write_to(file);
  file.write(graph_padding(padding_bytes));
  file.write(plan.head);
}

} // namespace layout

std::string graph_padding(uint64_t bytes) {
  std::string out;
  while (bytes > 0) {
    bool placed = false;
    for (uint64_t length_bytes = 1; length_bytes <= 10 && !placed; ++length_bytes) {
      if (bytes < layout::k_padding_tag.size() + length_bytes) {
        break;
      }
      uint64_t length = bytes - layout::k_padding_tag.size() - length_bytes;
      if (varint(length).size() == length_bytes) {
        out += layout::k_padding_tag + varint(length) + std::string(length, '\0');
        bytes = 0;
        placed = true;
      }
    }
    if (!placed) {
      if (bytes < layout::k_padding_minimum) {
        throw std::logic_error("no padding field takes " + std::to_string(bytes) + " bytes");
      }
      out += layout::k_padding_tag + varint(0);
      bytes -= layout::k_padding_minimum;
    }
  }
  return out;
}

namespace {

WrittenFile write_inline(onnx::ModelProto& model, const fs::path& path, WriteControl* control,
                         FileIdentity& written_as) {
  layout::InlinePlan plan(model, path);
  HashedFile file(path, control);
  file.write(std::string(1, layout::k_model_graph_tag) + varint(plan.graph_bytes()));
  layout::write_rest(file, plan, std::vector<bool>(plan.pieces.size(), false), 0);
  return file.commit(path.filename().string(), written_as);
}

} // namespace

namespace {

void check_graph_fits(onnx::ModelProto& model, const fs::path& path) {
  if (model.ByteSizeLong() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    throw Error(path.string() + ": graph is too large for one protobuf message",
                "its structure alone (not the weights) is over 2 GiB");
  }
}

} // namespace

WrittenGraph write_graph(onnx::ModelProto& model, const fs::path& folder,
                         const std::string& file_name, ExternalData mode, WriteControl* control) {
  WrittenGraph result;
  const fs::path path = folder / file_name;
  bool external = mode == ExternalData::always || graph_file_bytes(model) > layout::k_inline_limit;
  if (!external) {
    result.graph = write_inline(model, path, control, result.written_as[file_name]);
    return result;
  }
  const std::string data_name = file_name + k_external_data_suffix;
  DataFileWriter data(folder, data_name, control);
  Externalizer externalizer(model, data);
  externalizer.run();
  check_graph_fits(model, path);
  result.graph = write_inline(model, path, control, result.written_as[file_name]);
  result.external_data.push_back(data.commit(result.written_as[data_name]));
  externalizer.restore();
  return result;
}

std::vector<WrittenGraph> write_graphs_sharing_weights(const std::vector<GraphToWrite>& graphs,
                                                       const fs::path& folder,
                                                       WriteControl* control) {
  DataFileWriter data(folder, k_shared_weights_file, control);
  std::vector<std::unique_ptr<Externalizer>> externalizers;
  for (const auto& graph : graphs) { // in order: the first graph's weights lead the file
    externalizers.push_back(std::make_unique<Externalizer>(*graph.model, data));
    externalizers.back()->run();
    check_graph_fits(*graph.model, folder / graph.file_name);
  }
  std::vector<WrittenGraph> written(graphs.size());
  for (size_t i = 0; i < graphs.size(); ++i) {
    const std::string& name = graphs[i].file_name;
    written[i].graph =
        write_inline(*graphs[i].model, folder / name, control, written[i].written_as[name]);
  }
  if (!data.empty()) { // else no tensor was large enough: self-contained graphs, no file
    FileIdentity identity;
    WrittenFile file = data.commit(identity);
    for (auto& graph : written) {
      graph.external_data.push_back(file);
      graph.written_as[file.file] = identity;
    }
  }
  return written; // the externalizers, gone, put the models back
}

uint64_t graph_file_bytes(onnx::ModelProto& model) {
  return model.ByteSizeLong() + layout::stored_weight_bytes(model);
}

struct GraphPairWriter::Plan {
  Plan(onnx::ModelProto& first, onnx::ModelProto& second, fs::path first_path, fs::path second_path)
      : a(first, first_path), b(second, second_path), a_path(std::move(first_path)),
        b_path(std::move(second_path)) {}

  layout::InlinePlan a;
  layout::InlinePlan b;
  fs::path a_path;
  fs::path b_path;
  std::vector<std::pair<size_t, size_t>> shared; // piece indexes in a and in b
  uint64_t length = 0;                           // of both graph fields
};

std::unique_ptr<GraphPairWriter>
GraphPairWriter::plan(onnx::ModelProto& first, onnx::ModelProto& second, const fs::path& folder,
                      const std::string& first_name, const std::string& second_name,
                      ExternalData mode) {
  for (auto* model : {&first, &second}) {
    if (mode == ExternalData::always || graph_file_bytes(*model) > layout::k_inline_limit) {
      return nullptr;
    }
  }
  auto plan = std::make_unique<Plan>(first, second, folder / first_name, folder / second_name);
  const auto& a = plan->a.pieces;
  const auto& b = plan->b.pieces;
  // The shared initializers, in the first graph's order, each with its match in the second.
  std::unordered_map<std::string_view, size_t> b_by_head;
  uint64_t b_raw = 0;
  for (size_t j = 0; j < b.size(); ++j) {
    b_by_head.emplace(b[j].head, j);
    b_raw += b[j].raw_bytes();
  }
  uint64_t a_raw = 0;
  uint64_t shared_raw = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    a_raw += a[i].raw_bytes();
    auto found = b_by_head.find(a[i].head);
    if (found != b_by_head.end() && a[i].same_as(b[found->second])) {
      plan->shared.emplace_back(i, found->second);
      shared_raw += a[i].raw_bytes();
    }
  }
  // Worth it when the shared weights are most of both files.
  if (shared_raw < (uint64_t{1} << 20) || shared_raw * 4 < std::max(a_raw, b_raw) * 3) {
    return nullptr;
  }
  // The longer graph field needs no padding unless the shorter's would be too small for
  // a padding field.
  uint64_t a_bytes = plan->a.graph_bytes();
  uint64_t b_bytes = plan->b.graph_bytes();
  uint64_t longest = std::max(a_bytes, b_bytes);
  uint64_t difference = longest - std::min(a_bytes, b_bytes);
  plan->length = difference == 0 || difference >= layout::k_padding_minimum
                     ? longest
                     : longest + layout::k_padding_minimum;
  return std::unique_ptr<GraphPairWriter>(new GraphPairWriter(std::move(plan)));
}

GraphPairWriter::GraphPairWriter(std::unique_ptr<Plan> plan) : m_plan(std::move(plan)) {}

GraphPairWriter::~GraphPairWriter() = default;

std::pair<WrittenGraph, WrittenGraph> GraphPairWriter::write(WriteControl* control) {
  Plan& plan = *m_plan;
  std::vector<bool> a_written(plan.a.pieces.size(), false);
  std::vector<bool> b_written(plan.b.pieces.size(), false);
  HashedFile a_file(plan.a_path, control);
  a_file.mirror_to(plan.b_path);
  a_file.write(std::string(1, layout::k_model_graph_tag) + varint(plan.length));
  for (auto [i, j] : plan.shared) {
    plan.a.pieces[i].write_to(a_file);
    a_written[i] = true;
    b_written[j] = true;
  }
  std::unique_ptr<HashedFile> b_file = a_file.split_mirror();
  layout::write_rest(a_file, plan.a, a_written, plan.length - plan.a.graph_bytes());
  layout::write_rest(*b_file, plan.b, b_written, plan.length - plan.b.graph_bytes());
  std::pair<WrittenGraph, WrittenGraph> result;
  const std::string a_name = plan.a_path.filename().string();
  const std::string b_name = plan.b_path.filename().string();
  result.first.graph = a_file.commit(a_name, result.first.written_as[a_name]);
  result.second.graph = b_file->commit(b_name, result.second.written_as[b_name]);
  return result;
}

} // namespace npucc::output
