#pragma once

#include "accuracy/drift_report.h"

#include <string>
#include <string_view>
#include <vector>

// The drift report's figures folded where the values are: inside the runtime process
// (runtime::PairFold, registered as k_drift_fold), which runs the high graph and the low
// graph's emulation at once and folds each sample set's values as ONNX Runtime wrote them,
// so that npucc receives the figures, never the values (659 MiB per set and graph on
// ppocrv4_det at 640x640).
namespace npucc::accuracy {

// The registered fold's name (runtime::GraphRuntime::run_folded): the graphs' outputs, high
// first, paired by position; its result reads back with decode_drift_fold.
constexpr const char* k_drift_fold = "drift";

// What a drift fold returns: each value's figures, and the seconds spent folding.
struct DriftFoldResult {
  std::vector<DriftFigures> figures;
  double fold_seconds = 0;
};

std::string encode_drift_fold(const DriftFoldResult& result);
// Throws npucc::Error when `bytes` is not what encode_drift_fold wrote.
DriftFoldResult decode_drift_fold(std::string_view bytes);

// Folds the figures of later sample sets (`later`) into those of earlier ones (`into`), as
// fold_drift would have folded the sets one by one.
void merge_drift(DriftFigures& into, const DriftFigures& later);

} // namespace npucc::accuracy
