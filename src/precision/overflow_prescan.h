#pragma once

#include "util/file_observer.h"
#include "util/input_file.h"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <onnx/onnx_pb.h>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

// The mixed-precision rewrite needs, for every float32 weight, how many values would
// overflow the low type (paint.cpp). For weights mapped from external data that is a
// pass over every byte, and touching a mapping faults its pages in one by one. A
// compile that hashes the same files for its cache key anyway (pipeline::KeyHashing)
// hands each chunk it reads to an OverflowPrescan as well, so the counts come from bytes
// already in the CPU cache, on the second core, while the first runs the checker and
// the passes. The key's hasher hands the prescan to the compile it runs beside, which
// passes it to the rewrite in its options (OverflowSource, RewriteOptions::overflow);
// the rewrite takes a finished count (prescanned_overflows) or counts itself.
namespace npucc::precision {

class OverflowPrescan : public util::FileObserver {
public:
  // Collects the model's float32 weights that are slices of mapped files (main thread).
  explicit OverflowPrescan(const onnx::ModelProto& model);
  ~OverflowPrescan() override;
  OverflowPrescan(const OverflowPrescan&) = delete;
  OverflowPrescan& operator=(const OverflowPrescan&) = delete;

  // The files with weights to count, by index (the mappings' open files).
  const std::vector<std::shared_ptr<const util::InputFile>>& files() const override {
    return m_files;
  }
  // Counts the weights in `chunk`, the bytes of file `file` from `position`. Chunks of a
  // file must come in order, from position 0, from one thread. No allocation, no lock
  // (the thread may run while the process forks).
  void feed(int file, uint64_t position, std::string_view chunk) override;

  // The reading thread is done (every file read, or given up): nothing left to wait for.
  void end() override;

  struct Span;
  // The span of the weight whose raw bytes are `bytes` (the same address and length in
  // the mapping), or nullptr. Any thread: the spans are fixed by the constructor.
  const Span* find(std::string_view bytes) const;

private:
  std::vector<std::vector<std::unique_ptr<Span>>> m_spans;   // per file, by offset
  std::unordered_map<const char*, const Span*> m_by_address; // a weight's bytes -> its span
  std::vector<std::shared_ptr<const util::InputFile>> m_files;
  std::vector<size_t> m_cursor; // per file: first span not yet finished
  std::unique_ptr<float[]> m_scratch;
  std::atomic<bool> m_ended{false};
};

// Speculation, so that a compile can write its graphs while the key is still being
// hashed (pipeline/compile_cached.cpp): while a compile stage is given an
// OverflowAssumption, prescanned_overflows answers 0 at once for every weight the prescan
// covers (counted yet or not, so that the outcome never depends on timing), and records
// that answer. holds() waits for the reading thread and tells whether every such answer was
// right; if not, the rewrite must run again. Weights almost never overflow float16 (a value
// past 65504), and bfloat16 has float32's range. One thread uses it (the rewrite's).
class OverflowAssumption {
public:
  OverflowAssumption() = default;
  OverflowAssumption(const OverflowAssumption&) = delete;
  OverflowAssumption& operator=(const OverflowAssumption&) = delete;

  bool assumed() const { return !m_assumed.empty(); }
  // Waits for the assumed weights' counts. Call while the OverflowPrescan lives.
  bool holds() const;
  // prescanned_overflows' side.
  void record(const OverflowPrescan::Span* span, int32_t low);

private:
  struct Assumed {
    const OverflowPrescan::Span* span;
    int32_t low;
  };
  std::vector<Assumed> m_assumed;
};

// Where the rewrite takes weights' overflow counts from: nothing (it counts them all
// itself), a cache key's prescan, and while a compile speculates, the assumption that
// records what it took for granted. Both must outlive the compile stage given them.
struct OverflowSource {
  const OverflowPrescan* prescan = nullptr;
  OverflowAssumption* assumption = nullptr;
};

// The count `source` has for `bytes` (a mapped weight's raw bytes) and the low type
// (TensorProto::FLOAT16 or BFLOAT16): 0 at once under an assumption, else the prescan's
// count, waiting while its reading thread has yet to reach that weight (it streams the
// file anyway, and counting here would fault in the mapping and repeat its work).
// nullopt when no prescan covers the bytes or it ended without them.
std::optional<uint64_t> prescanned_overflows(const OverflowSource& source, std::string_view bytes,
                                             int32_t low);

} // namespace npucc::precision
