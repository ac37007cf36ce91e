#pragma once

#include "model/wire_source.h"

#include <cstdint>
#include <optional>

// Checking a packed varint field (int64_data, int32_data...) as the model is read
// means counting its values. A value ends at each byte without the continuation bit,
// whatever came before, so parts of the field can be counted at once, each on its own
// core: only a run of continuation bytes across a cut needs both parts. This is the read's
// check before the second core starts hashing the model (compiler.cpp,
// compile_beside_read), so it is on the compile's critical path.
namespace npucc::model {

// The packed varints in [begin, end) of `file`, counted in parts on up to
// util::thread_budget() threads: their count, or nullopt when protobuf would refuse the
// field (a varint of more than ten bytes, or one cut by the field's end) or a read fails.
std::optional<uint64_t> count_packed_varints(WireSource& file, uint64_t begin, uint64_t end);

} // namespace npucc::model
