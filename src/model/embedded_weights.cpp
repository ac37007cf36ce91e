#include "model/embedded_weights.h"
#include "model/onnx_fields.h"

#include "model/graph_walk.h"
#include "npucc/error.h"
#include "util/eintr.h"

#include <algorithm>
#include <climits>
#include <google/protobuf/unknown_field_set.h>

namespace npucc::model {

namespace {

using namespace onnx_fields; // model/onnx_fields.h
// A tensor's value fields: float, int32, string, int64, raw, double and uint64 data.
constexpr uint32_t k_tensor_value_fields[] = {4, 5, 6, 7, 9, 10, 11};
// The marker put in a left-out raw_data's place: a varint field no ONNX version defines,
// which protobuf keeps as an unknown field. A file that has one already is parsed whole.
constexpr uint32_t k_marker_field = 8190;

constexpr uint32_t k_wire_varint = 0;
constexpr uint32_t k_wire_fixed64 = 1;
constexpr uint32_t k_wire_bytes = 2;
constexpr uint32_t k_wire_fixed32 = 5;

// The messages the walk enters: those that lead to an initializer's raw_data, the same
// graphs for_each_graph visits (a node's graph attributes, at any depth), and with
// TableScope::every_tensor the tensors of attributes (Constant values).
enum class Kind { model, graph, node, attribute, tensor };

std::optional<Kind> child_kind(Kind parent, uint32_t field, TableScope scope) {
  switch (parent) {
  case Kind::model:
    return field == k_model_graph ? std::optional(Kind::graph) : std::nullopt;
  case Kind::graph:
    if (field == k_graph_node) {
      return Kind::node;
    }
    return field == k_graph_initializer ? std::optional(Kind::tensor) : std::nullopt;
  case Kind::node:
    return field == k_node_attribute ? std::optional(Kind::attribute) : std::nullopt;
  case Kind::attribute:
    if (field == k_attribute_graph || field == k_attribute_graphs) {
      return Kind::graph;
    }
    return scope == TableScope::every_tensor &&
                   (field == k_attribute_t || field == k_attribute_tensors)
               ? std::optional(Kind::tensor)
               : std::nullopt;
  case Kind::tensor:
    return std::nullopt;
  }
  return std::nullopt;
}

void put_varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

} // namespace

bool WireSource::byte(uint64_t pos, uint8_t& out) {
  if (m_fd < 0) {
    out = static_cast<uint8_t>(m_bytes[pos]);
    return true;
  }
  if (pos < m_window_start || pos >= m_window_start + m_window.size()) {
    m_window.resize(k_window);
    ssize_t n = util::pread_full(m_fd, m_window.data(), k_window, pos);
    if (n <= 0) {
      m_window.clear();
      return false;
    }
    m_window.resize(static_cast<size_t>(n));
    m_window_start = pos;
  }
  out = static_cast<uint8_t>(m_window[pos - m_window_start]);
  return true;
}

bool WireSource::append(uint64_t pos, uint64_t length, std::string& out) {
  if (m_fd < 0) {
    out.append(m_bytes.substr(pos, length));
    return true;
  }
  size_t old_size = out.size();
  out.resize(old_size + length);
  ssize_t n = util::pread_full(m_fd, out.data() + old_size, length, pos);
  return n == static_cast<ssize_t>(length);
}

namespace {

// One field of a message: [start, end) in the file; a bytes field's contents are
// [body, end), a varint's value is `value`.
struct Field {
  uint32_t number = 0;
  uint32_t wire = 0;
  uint64_t value = 0;
  uint64_t start = 0;
  uint64_t body = 0;
  uint64_t end = 0;
};

bool read_varint(WireSource& file, uint64_t& pos, uint64_t end, uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64 && pos < end; shift += 7) {
    uint8_t byte = 0;
    if (!file.byte(pos++, byte)) {
      return false;
    }
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      return true;
    }
  }
  return false;
}

// The field at `pos` (which moves past it); false for anything malformed or a group.
bool next_field(WireSource& file, uint64_t& pos, uint64_t end, Field& field) {
  field.start = pos;
  field.value = 0;
  uint64_t tag = 0;
  if (!read_varint(file, pos, end, tag) || (tag >> 3) == 0 || (tag >> 3) > (1u << 29) - 1) {
    return false;
  }
  field.number = static_cast<uint32_t>(tag >> 3);
  field.wire = static_cast<uint32_t>(tag & 7);
  uint64_t value = 0;
  switch (field.wire) {
  case k_wire_varint:
    if (!read_varint(file, pos, end, field.value)) {
      return false;
    }
    break;
  case k_wire_fixed64:
  case k_wire_fixed32: {
    uint64_t size = field.wire == k_wire_fixed64 ? 8 : 4;
    if (end - pos < size) {
      return false;
    }
    pos += size;
    break;
  }
  case k_wire_bytes:
    if (!read_varint(file, pos, end, value) || value > end - pos) {
      return false;
    }
    field.body = pos;
    pos += value;
    break;
  default:
    return false; // groups (deprecated) and invalid wire types
  }
  field.end = pos;
  return true;
}

// What the cut needs to know of a tensor before it leaves one of its fields out.
struct TensorFacts {
  int raw_data = 0;
  int value_fields = 0;
  int64_t data_type = 0;
  std::optional<uint64_t> elements = 1; // nullopt: a dim is negative or the count overflows
  bool located = false;                 // external data keys or a data location
};

void multiply_dim(TensorFacts& facts, uint64_t dim) {
  uint64_t product = 0;
  if (!facts.elements || dim > uint64_t{INT64_MAX} ||
      __builtin_mul_overflow(*facts.elements, dim, &product)) {
    facts.elements = std::nullopt;
  } else {
    facts.elements = product;
  }
}

bool is_value_field(uint32_t number) {
  return std::find(std::begin(k_tensor_value_fields), std::end(k_tensor_value_fields), number) !=
         std::end(k_tensor_value_fields);
}

class Cutter {
public:
  Cutter(WireSource& file, int max_nesting, TableScope scope)
      : m_file(file), m_max_nesting(max_nesting), m_scope(scope) {}

  // Writes the message [begin, end) of kind `kind` to `out`, its tensors' large data
  // replaced by markers.
  bool message(Kind kind, uint64_t begin, uint64_t end, int nesting, std::string& out) {
    Field field;
    for (uint64_t pos = begin; pos < end;) {
      if (!next_field(m_file, pos, end, field)) {
        return false;
      }
      auto child =
          field.wire == k_wire_bytes ? child_kind(kind, field.number, m_scope) : std::nullopt;
      if (!child) {
        if (!m_file.append(field.start, field.end - field.start, out)) {
          return false;
        }
        continue;
      }
      int child_nesting = nesting + (*child == Kind::graph && kind != Kind::model ? 1 : 0);
      if (child_nesting > m_max_nesting) {
        return false;
      }
      std::string inner;
      bool ok = *child == Kind::tensor
                    ? tensor(field.body, field.end, inner)
                    : message(*child, field.body, field.end, child_nesting, inner);
      if (!ok) {
        return false;
      }
      put_varint(out, (uint64_t{field.number} << 3) | k_wire_bytes);
      put_varint(out, inner.size());
      out += inner;
    }
    return true;
  }

  std::vector<EmbeddedSlice> take_slices() { return std::move(m_slices); }

private:
  // A TensorProto: an initializer, or (TableScope::every_tensor) an attribute's.
  bool tensor(uint64_t begin, uint64_t end, std::string& out) {
    std::optional<TensorFacts> facts = read_facts(begin, end);
    // At most one raw_data: protobuf keeps the last of several, which a marker in place of
    // one would not.
    if (!facts || facts->raw_data > 1) {
      return false;
    }
    Field field;
    for (uint64_t pos = begin; pos < end;) {
      next_field(m_file, pos, end, field); // checked by read_facts
      if (leaves_out(field, *facts)) {
        put_varint(out, uint64_t{k_marker_field} << 3 | k_wire_varint);
        put_varint(out, m_slices.size());
        m_slices.push_back({field.body, field.end - field.body});
      } else if (!m_file.append(field.start, field.end - field.start, out)) {
        return false;
      }
    }
    return true;
  }

  bool leaves_out(const Field& field, const TensorFacts& facts) const {
    uint64_t length = field.end - field.body;
    if (field.wire != k_wire_bytes || length < k_weight_store_threshold) {
      return false;
    }
    if (field.number == k_tensor_raw_data) {
      return true;
    }
    // Packed float_data of a float32 tensor (double_data of a float64 one) holds the very
    // bytes raw_data would, little-endian: left out too when they are its only values and
    // match its dims. Anything else stays, for the reader's checks to judge.
    if (m_scope != TableScope::every_tensor || facts.value_fields != 1 || facts.located ||
        !facts.elements) {
      return false;
    }
    uint64_t size = 0;
    if (field.number == k_tensor_float_data && facts.data_type == onnx::TensorProto::FLOAT) {
      size = 4;
    } else if (field.number == k_tensor_double_data &&
               facts.data_type == onnx::TensorProto::DOUBLE) {
      size = 8;
    }
    return size != 0 && length % size == 0 && length / size == *facts.elements;
  }

  // The tensor's facts; nullopt when a field is malformed or looks like a marker.
  std::optional<TensorFacts> read_facts(uint64_t begin, uint64_t end) {
    TensorFacts facts;
    Field field;
    for (uint64_t pos = begin; pos < end;) {
      if (!next_field(m_file, pos, end, field) || field.number == k_marker_field) {
        return std::nullopt;
      }
      facts.raw_data += field.number == k_tensor_raw_data ? 1 : 0;
      facts.value_fields += is_value_field(field.number) ? 1 : 0;
      facts.located = facts.located || field.number == k_tensor_external_data ||
                      (field.number == k_tensor_data_location && field.value != 0);
      if (field.number == k_tensor_data_type && field.wire == k_wire_varint) {
        facts.data_type = static_cast<int64_t>(field.value);
      } else if (field.number == k_tensor_dims && !read_dims(field, facts)) {
        return std::nullopt;
      }
    }
    return facts;
  }

  // One dim (a varint) or several (packed).
  bool read_dims(const Field& field, TensorFacts& facts) {
    if (field.wire == k_wire_varint) {
      multiply_dim(facts, field.value);
      return true;
    }
    if (field.wire != k_wire_bytes) {
      facts.elements = std::nullopt;
      return true;
    }
    for (uint64_t pos = field.body; pos < field.end;) {
      uint64_t dim = 0;
      if (!read_varint(m_file, pos, field.end, dim)) {
        return false;
      }
      multiply_dim(facts, dim);
    }
    return true;
  }

  WireSource& m_file;
  int m_max_nesting;
  TableScope m_scope;
  std::vector<EmbeddedSlice> m_slices;
};

// The marker's slice index in `tensor`, removed from its unknown fields; nullopt if none.
std::optional<uint64_t> take_marker(onnx::TensorProto& tensor) {
  auto* unknown = tensor.GetReflection()->MutableUnknownFields(&tensor);
  std::optional<uint64_t> index;
  for (int i = 0; i < unknown->field_count(); ++i) {
    const auto& field = unknown->field(i);
    if (field.number() == static_cast<int>(k_marker_field) &&
        field.type() == google::protobuf::UnknownField::TYPE_VARINT) {
      index = field.varint();
    }
  }
  if (index) {
    unknown->DeleteByNumber(static_cast<int>(k_marker_field));
  }
  return index;
}

} // namespace

std::optional<Skeleton> cut_embedded_weights(WireSource& file, int max_nesting, TableScope scope) {
  Cutter cutter(file, max_nesting, scope);
  Skeleton skeleton;
  if (!cutter.message(Kind::model, 0, file.size(), 0, skeleton.bytes)) {
    return std::nullopt;
  }
  skeleton.slices = cutter.take_slices();
  return skeleton;
}

std::vector<LeftOutWeight> take_left_out(onnx::ModelProto& proto, const Skeleton& skeleton,
                                         const std::string& file_name) {
  std::vector<LeftOutWeight> found;
  std::vector<bool> seen(skeleton.slices.size(), false);
  // Every tensor the cut may have entered (initializers, attribute tensors; never sparse).
  auto take = [&](onnx::TensorProto& tensor) {
    auto index = take_marker(tensor);
    if (!index) {
      return;
    }
    if (*index >= seen.size() || seen[*index]) {
      throw Error(file_name + ": tensor \"" + tensor.name() +
                  "\": its weights were lost while reading (npucc bug)");
    }
    seen[*index] = true;
    found.push_back({&tensor, skeleton.slices[*index]});
  };
  for_each_tensor(*proto.mutable_graph(), take, SparseTensors::skip);
  if (found.size() != skeleton.slices.size()) {
    throw Error(file_name + ": " + std::to_string(skeleton.slices.size() - found.size()) +
                " initializers' weights were lost while reading (npucc bug)");
  }
  return found;
}

void adopt_left_out(const std::vector<LeftOutWeight>& weights,
                    const std::shared_ptr<const util::MappedFile>& file, WeightStore& store) {
  for (const auto& weight : weights) {
    store.adopt_mapped(*weight.tensor, file, weight.slice.offset, weight.slice.length);
  }
}

} // namespace npucc::model
