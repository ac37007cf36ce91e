#pragma once

#include "model/wire_source.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

// A tensor's values in one of TensorProto's typed fields (float_data, int32_data,
// int64_data, double_data, uint64_data), as older TensorFlow and Keras converters write
// them, are the values raw_data would hold in another encoding: varints (a small int64
// takes one byte, a negative one ten), or fixed-size values each with its own tag when
// the field is not packed. Parsing them into protobuf's repeated fields costs many times
// the model in memory and time. Instead the reader checks them in one streaming pass and
// the tensor refers to them where they are in the file (weight_store.h); they are decoded
// again, a block at a time, straight into the output as it is written, so their raw bytes
// are never all in memory, nor written anywhere but the output.
namespace npucc::model {

// How a type's values are stored in its typed field.
struct TypedLayout {
  uint32_t field = 0;              // the TensorProto field number
  uint32_t values_per_element = 1; // 2 for complex numbers
  uint32_t value_bytes = 0;        // each value's size in raw data
  bool boolean = false;            // a bool: any non-zero value is 1
};

// nullopt for types without a typed field that decodes to whole bytes per value
// (strings, the float8 types, the types that pack several values in one).
std::optional<TypedLayout> typed_layout(int64_t data_type);

// A tensor's typed values in a file: the TensorProto message [begin, end) and the field
// of `layout` in it (every occurrence, packed or not), `values` of them.
struct TypedValues {
  uint64_t begin = 0;
  uint64_t end = 0;
  TypedLayout layout;
  uint64_t values = 0;
  uint64_t raw_length() const { return values * layout.value_bytes; }
};

enum class Decoded {
  all,       // exactly `values.values` values, all handed on
  malformed, // a field protobuf would refuse to parse
  mismatch,  // another count, or a wire type protobuf would not read as values
  stopped,   // `out` returned false
};

// Receives raw bytes a block at a time; false stops the decoding.
using RawBlocks = std::function<bool(std::string_view)>;

// Decodes `values` from `file` into `out`, as protobuf would parse them; with `out` null,
// only counts and checks them.
Decoded decode_typed(WireSource& file, const TypedValues& values, const RawBlocks* out);

} // namespace npucc::model
