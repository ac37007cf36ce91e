#pragma once

#include <nlohmann/json.hpp>

#include <string>

// The drift picture (`npucc inspect OUT --drift-plot FILE.svg`, `npucc compile
// --accuracy-plot FILE.svg`): a drift report (report/drift_document.h) drawn along the graph
// as one self-contained SVG document. No I/O: the caller reads and writes the files
// (report/drift_plot_file.h).
//
// What it shows, x being the values' topological order:
//   - top panel: 1 - cosine per value on a log scale, with the threshold as a line;
//   - bottom panel: max abs error per value on a log scale;
//   - lanes under them: values kept float32, values that overflow the low type, values
//     that flush to zero (share above k_flush_mark_share), values whose cosine is
//     undefined (never drawn as a zero error: the line breaks there);
//   - the first crossing as a vertical line labelled with its node and op, the top
//     offenders as numbered badges listed under the legend.
namespace npucc::report {

// A value whose flush share is above this gets a flush mark: a few flushed elements are
// the norm of any float16 tensor holding tiny values, a share this size is a pattern.
inline constexpr double k_flush_mark_share = 0.01;
// Up to this many values get a dot each; beyond, the line alone (the file stays small).
inline constexpr size_t k_dots_up_to = 400;
// At most this many top offenders are labelled.
inline constexpr size_t k_offenders_shown = 10;

// Throws npucc::Error when `drift` is not a drift report this npucc reads.
std::string render_drift_svg(const nlohmann::json& drift);

} // namespace npucc::report
