#pragma once

#include "util/file_observer.h"

#include <memory>
#include <onnx/onnx_pb.h>

namespace npucc::precision {
class OverflowPrescan;
class OverflowAssumption;
struct OverflowSource;
} // namespace npucc::precision

namespace npucc::compiler {

// How many values of each mapped float32 weight would overflow the low type: the
// mixed-precision rewrite needs it for every weight (precision/overflow_prescan.h). It is
// counted from the bytes a read of the input files streams anyway (the cache key's hash,
// util::InputScan), which sees only an util::FileObserver; a compile stage given these
// counts takes them instead of counting itself. They must outlive the read and the stage.
class OverflowCounts {
public:
  explicit OverflowCounts(const onnx::ModelProto& model);
  ~OverflowCounts();
  OverflowCounts(const OverflowCounts&) = delete;
  OverflowCounts& operator=(const OverflowCounts&) = delete;

  // What the read feeds.
  util::FileObserver& observer();

  // From here on, a compile stage given these takes the weights the read has yet to reach
  // not to overflow, so that it need not wait (precision::OverflowAssumption): a compile
  // writes its graphs while the key is still being hashed.
  void speculate();
  // Waits for the read; whether every weight so taken indeed fits. When not, the low
  // graph must be built again (rebuild_variants), with these counts, no longer
  // speculating.
  bool speculation_held();

  // The rewrite's side.
  precision::OverflowSource source() const;

private:
  std::unique_ptr<precision::OverflowPrescan> m_prescan;
  std::unique_ptr<precision::OverflowAssumption> m_assumption; // while speculating
};

} // namespace npucc::compiler
