#pragma once

// How npucc names the files of a graph it writes: a graph's external data file sits
// beside it, named GRAPH.onnx + this suffix. The compiler names them so, and the cache
// knows them by it (it copies them rather than linking: ONNX Runtime refuses a data file
// with more than one link). A header of its own, without protobuf, so the storage layer
// can take it.

namespace npucc {

inline constexpr const char* k_external_data_suffix = ".data";

} // namespace npucc
