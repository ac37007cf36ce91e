#include "precision/overflow_prescan.h"

#include "model/graph_walk.h"
#include "model/weight_store.h"
#include "precision/float_convert.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <thread>

namespace npucc::precision {

namespace {

constexpr size_t k_scratch_floats = 16 * 1024;

} // namespace

struct OverflowPrescan::Span {
  const char* data = nullptr; // the weight's bytes in the mapping (the lookup key)
  uint64_t offset = 0;
  uint64_t length = 0;
  uint64_t done = 0;
  char carry[sizeof(float)] = {};
  uint64_t half = 0;
  uint64_t bfloat16 = 0;
  std::atomic<bool> finished{false};
  const std::atomic<bool>* ended = nullptr; // the owner's
};

OverflowPrescan::OverflowPrescan(const onnx::ModelProto& model)
    : m_scratch(new float[k_scratch_floats]) {
  // By path, so that the files' order does not depend on where they sit in memory.
  std::map<std::filesystem::path, std::map<uint64_t, std::unique_ptr<Span>>> by_file;
  std::map<std::filesystem::path, std::shared_ptr<const util::InputFile>> inputs;
  auto collect = [&](const onnx::TensorProto& tensor) {
    if (tensor.data_type() != onnx::TensorProto::FLOAT) {
      return;
    }
    auto slice = model::mapped_slice(tensor);
    if (!slice || slice->length < sizeof(float)) {
      return;
    }
    auto span = std::make_unique<Span>();
    span->data = slice->file->bytes().data() + slice->offset;
    span->offset = slice->offset;
    span->length = slice->length;
    span->ended = &m_ended;
    // One span per start; a weight that shares or overlaps another's bytes is counted
    // by the rewrite itself.
    by_file[slice->file->path()].emplace(slice->offset, std::move(span));
    inputs[slice->file->path()] = slice->file->input();
  };
  // Where weights are mapped: initializers, and Constant values (PaddlePaddle's exporter
  // writes its weights as Constant nodes); other tensors are counted by the rewrite.
  model::for_each_graph(model.graph(), [&](const onnx::GraphProto& graph, int) {
    for (const auto& tensor : graph.initializer()) {
      collect(tensor);
    }
    for (const auto& node : graph.node()) {
      for (const auto& attribute : node.attribute()) {
        if (attribute.has_t()) {
          collect(attribute.t());
        }
      }
    }
  });
  for (auto& [path, spans] : by_file) {
    std::vector<std::unique_ptr<Span>> kept;
    uint64_t end = 0;
    for (auto& entry : spans) {
      if (entry.second->offset >= end) {
        end = entry.second->offset + entry.second->length;
        kept.push_back(std::move(entry.second));
      }
    }
    for (const auto& span : kept) {
      m_by_address[span->data] = span.get();
    }
    m_files.push_back(inputs[path]);
    m_spans.push_back(std::move(kept));
  }
  m_cursor.assign(m_spans.size(), 0);
}

OverflowPrescan::~OverflowPrescan() = default;

const OverflowPrescan::Span* OverflowPrescan::find(std::string_view bytes) const {
  auto found = m_by_address.find(bytes.data());
  return found == m_by_address.end() || found->second->length != bytes.size() ? nullptr
                                                                              : found->second;
}

void OverflowPrescan::end() {
  m_ended.store(true, std::memory_order_release);
}

namespace {

void count_floats(OverflowPrescan::Span& span, const char* bytes, size_t floats, float* scratch) {
  auto add = [&](const float* values, size_t n) {
    span.half += count_half_overflows(values, n);
    span.bfloat16 += count_bfloat16_overflows(values, n);
  };
  if (reinterpret_cast<uintptr_t>(bytes) % alignof(float) == 0) {
    add(reinterpret_cast<const float*>(bytes), floats);
    return;
  }
  while (floats > 0) {
    size_t n = std::min(floats, k_scratch_floats);
    std::memcpy(scratch, bytes, n * sizeof(float));
    add(scratch, n);
    bytes += n * sizeof(float);
    floats -= n;
  }
}

} // namespace

void OverflowPrescan::feed(int file, uint64_t position, std::string_view chunk) {
  if (file < 0 || static_cast<size_t>(file) >= m_spans.size()) {
    return;
  }
  auto& spans = m_spans[static_cast<size_t>(file)];
  size_t& cursor = m_cursor[static_cast<size_t>(file)];
  const uint64_t chunk_end = position + chunk.size();
  while (cursor < spans.size() && spans[cursor]->offset < chunk_end) {
    Span& span = *spans[cursor];
    uint64_t from = std::max(position, span.offset + span.done);
    uint64_t to = std::min(chunk_end, span.offset + span.length);
    const char* bytes = chunk.data() + (from - position);
    uint64_t left = to - from;
    // A float cut by the previous chunk's end: complete it from the carry.
    size_t partial = static_cast<size_t>(span.done % sizeof(float));
    if (partial != 0 && left > 0) {
      size_t take = std::min<size_t>(sizeof(float) - partial, static_cast<size_t>(left));
      std::memcpy(span.carry + partial, bytes, take);
      bytes += take;
      left -= take;
      span.done += take;
      if (span.done % sizeof(float) == 0) {
        float value = 0;
        std::memcpy(&value, span.carry, sizeof(float));
        count_floats(span, reinterpret_cast<const char*>(&value), 1, m_scratch.get());
      }
    }
    size_t floats = static_cast<size_t>(left / sizeof(float));
    count_floats(span, bytes, floats, m_scratch.get());
    bytes += floats * sizeof(float);
    left -= floats * sizeof(float);
    span.done += floats * sizeof(float);
    if (left > 0) { // a float this chunk cuts: keep its first bytes
      std::memcpy(span.carry, bytes, static_cast<size_t>(left));
      span.done += left;
    }
    if (span.done < span.length) {
      break; // the span goes on in the next chunk
    }
    span.finished.store(true, std::memory_order_release);
    ++cursor;
  }
}

namespace {

// Waits until the reading thread has counted `span` or given up; false if it gave up.
bool wait_for(const OverflowPrescan::Span& span) {
  while (!span.finished.load(std::memory_order_acquire)) {
    if (span.ended->load(std::memory_order_acquire)) {
      return span.finished.load(std::memory_order_acquire);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return true;
}

uint64_t count_of(const OverflowPrescan::Span& span, int32_t low) {
  return low == onnx::TensorProto::FLOAT16 ? span.half : span.bfloat16;
}

} // namespace

void OverflowAssumption::record(const OverflowPrescan::Span* span, int32_t low) {
  m_assumed.push_back({span, low});
}

bool OverflowAssumption::holds() const {
  for (const auto& assumed : m_assumed) {
    if (!wait_for(*assumed.span) || count_of(*assumed.span, assumed.low) != 0) {
      return false;
    }
  }
  return true;
}

std::optional<uint64_t> prescanned_overflows(const OverflowSource& source, std::string_view bytes,
                                             int32_t low) {
  const OverflowPrescan::Span* span = source.prescan ? source.prescan->find(bytes) : nullptr;
  if (span == nullptr) {
    return std::nullopt;
  }
  if (source.assumption != nullptr) {
    // Even when the count is already there: what the rewrite does then never depends
    // on how far the reading thread got.
    source.assumption->record(span, low);
    return 0;
  }
  if (!wait_for(*span)) {
    return std::nullopt;
  }
  return count_of(*span, low);
}

} // namespace npucc::precision
