#pragma once

#include <cstdint>
#include <string_view>

namespace npucc::model {

// How deeply subgraphs (If/Loop/Scan bodies) nest in a serialized ModelProto, read
// straight from the protobuf wire format without recursion, so a model nested too
// deeply for protobuf's parser can still be refused with a precise message. Follows
// only model.graph, graph.node, node.attribute and attribute.g/graphs; stops early
// once `stop_above` is exceeded and at the first malformed byte (the parser reports
// those). The main graph is depth 0.
int scan_subgraph_depth(std::string_view bytes, int stop_above);

} // namespace npucc::model
