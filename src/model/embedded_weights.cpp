#include "model/embedded_weights.h"

#include "model/graph_walk.h"
#include "model/onnx_fields.h"
#include "model/typed_data.h"
#include "npucc/error.h"

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

// What the cut needs to know of a tensor before it leaves one of its fields out.
struct TensorFacts {
  int raw_data = 0;
  int value_fields = 0;       // occurrences of value fields
  uint32_t value_numbers = 0; // a bit per value field number present
  uint64_t value_bytes = 0;   // on the wire, tags included
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
  Cutter(WireSource& file, int max_nesting, TableScope scope, uint64_t max_decoded_bytes)
      : m_file(file), m_max_nesting(max_nesting), m_scope(scope),
        m_max_decoded_bytes(max_decoded_bytes) {}

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
    std::optional<uint32_t> decoded_field;
    std::optional<EmbeddedSlice> decoded;
    if (auto layout = decodable(*facts)) {
      if (!decode(begin, end, *layout, *facts->elements, decoded)) {
        return false;
      }
      decoded_field = decoded ? std::optional(layout->field) : std::nullopt;
    }
    Field field;
    for (uint64_t pos = begin; pos < end;) {
      next_field(m_file, pos, end, field); // checked by read_facts
      if (decoded && field.number == decoded_field) {
        put_marker(*decoded, out); // its first occurrence; the others are left out
        decoded.reset();
      } else if (decoded_field && field.number == decoded_field) {
        continue;
      } else if (leaves_out(field, *facts)) {
        put_marker({field.body, field.end - field.body, std::nullopt}, out);
      } else if (!m_file.append(field.start, field.end - field.start, out)) {
        return false;
      }
    }
    return true;
  }

  void put_marker(const EmbeddedSlice& slice, std::string& out) {
    put_varint(out, uint64_t{k_marker_field} << 3 | k_wire_varint);
    put_varint(out, m_slices.size());
    m_slices.push_back(slice);
  }

  // How the tensor's typed field decodes to raw bytes (typed_data.h), when it is large,
  // its only values, of the tensor's type, and not already the raw bytes (packed
  // float_data of a float32 tensor: leaves_out takes it as it is).
  std::optional<TypedLayout> decodable(const TensorFacts& facts) const {
    if (m_scope != TableScope::every_tensor || facts.located || !facts.elements ||
        facts.value_bytes < k_weight_store_threshold || facts.raw_data != 0 ||
        __builtin_popcount(facts.value_numbers) != 1) {
      return std::nullopt;
    }
    auto layout = typed_layout(facts.data_type);
    if (!layout || facts.value_numbers != 1u << layout->field) {
      return std::nullopt;
    }
    uint64_t values = 0;
    uint64_t bytes = 0;
    // Each value takes a byte at least on the wire, and the decoded tensor must be one a
    // full parse would accept: else protobuf and the reader's checks judge it.
    if (__builtin_mul_overflow(*facts.elements, uint64_t{layout->values_per_element}, &values) ||
        __builtin_mul_overflow(values, uint64_t{layout->value_bytes}, &bytes) ||
        values > facts.value_bytes || bytes > m_max_decoded_bytes) {
      return std::nullopt;
    }
    bool packed_raw =
        facts.value_fields == 1 && layout->values_per_element == 1 &&
        (layout->field == k_tensor_float_data || layout->field == k_tensor_double_data);
    if (packed_raw) {
      return std::nullopt; // leaves_out decides
    }
    return layout;
  }

  // Checks that the layout's field decodes to the tensor's values (read again when the
  // weights are written). False for a malformed field; `slice` stays empty when the
  // values do not match the tensor's dims (the field then stays in the skeleton).
  bool decode(uint64_t begin, uint64_t end, const TypedLayout& layout, uint64_t elements,
              std::optional<EmbeddedSlice>& slice) {
    TypedValues values{begin, end, layout, elements * layout.values_per_element};
    Decoded result = decode_typed(m_file, values, nullptr);
    if (result == Decoded::all) {
      slice = EmbeddedSlice{begin, end - begin, values};
    }
    return result != Decoded::malformed;
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
      if (is_value_field(field.number)) {
        facts.value_fields += 1;
        facts.value_numbers |= 1u << field.number;
        facts.value_bytes += field.end - field.start;
      }
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
  uint64_t m_max_decoded_bytes;
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

std::optional<Skeleton> cut_embedded_weights(WireSource& file, int max_nesting, TableScope scope,
                                             uint64_t max_decoded_bytes) {
  Cutter cutter(file, max_nesting, scope, max_decoded_bytes);
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
    if (weight.slice.typed) {
      store.adopt_typed(*weight.tensor, file, *weight.slice.typed);
    } else {
      store.adopt_mapped(*weight.tensor, file, weight.slice.offset, weight.slice.length);
    }
  }
}

} // namespace npucc::model
