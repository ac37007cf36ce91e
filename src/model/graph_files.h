#pragma once

// How npucc names the files of a graph it writes: a graph's external data file sits
// beside it, named GRAPH.onnx + this suffix; the graphs of one compile that share their
// weights (npucc-compile(1), --self-contained) share one data file of a fixed name, which
// ends in the same suffix. The compiler names them so, and the cache knows them by it (it
// copies them rather than linking: ONNX Runtime refuses a data file with more than one
// link). A header of its own, without protobuf, so the storage layer can take it.

namespace npucc {

inline constexpr const char* k_external_data_suffix = ".data";
inline constexpr const char* k_shared_weights_file = "weights.data";

} // namespace npucc
