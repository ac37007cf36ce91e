#include "report/drift_plot.h"

#include "report/drift_document.h"
#include "report/drift_scale.h"
#include "report/svg_text.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace npucc::report {

namespace {

// The canvas: fixed width, the height grows with the offenders' list.
constexpr double k_width = 1200;
constexpr double k_left = 100;
constexpr double k_right = 24;
constexpr double k_plot_width = k_width - k_left - k_right;
constexpr double k_cosine_top = 64;
constexpr double k_cosine_height = 210;
constexpr double k_abs_top = 304;
constexpr double k_abs_height = 170;
constexpr double k_lanes_top = 494;
constexpr double k_lane_height = 12;
constexpr double k_lane_pitch = 17;
constexpr double k_lanes_bottom = k_lanes_top + 4 * k_lane_pitch;
constexpr double k_legend_top = k_lanes_bottom + 58;
constexpr double k_row = 18;
// A mark is at least this wide, so one value among thousands still shows.
constexpr double k_min_mark_width = 1.5;

// One colour per meaning; the e2e test finds the marks by these exact colours.
constexpr const char* k_cosine_colour = "#1f77b4";
constexpr const char* k_abs_colour = "#2ca02c";
constexpr const char* k_threshold_colour = "#d62728";
constexpr const char* k_kept_colour = "#8c8c8c";
constexpr const char* k_overflow_colour = "#ff7f0e";
constexpr const char* k_flush_colour = "#17becf";
constexpr const char* k_undefined_colour = "#e377c2";
constexpr const char* k_offender_colour = "#9467bd";
constexpr const char* k_grid_colour = "#e6e6e6";
// Text over lines stays legible: a white outline drawn under the glyphs.
constexpr const char* k_halo = " stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\"";

std::string attr(const char* name, double value) {
  return std::string(" ") + name + "=\"" + svg_coordinate(value) + "\"";
}

std::string one_minus(const std::optional<double>& cosine) {
  return cosine ? svg_number(std::max(0.0, 1.0 - *cosine)) : "undefined";
}

// The figures a panel plots: nullopt where there is none.
using Series = std::vector<std::optional<double>>;

Series one_minus_cosine(const DriftDocument& document) {
  Series series;
  for (const auto& value : document.values) {
    series.push_back(value.cosine ? std::optional<double>(std::max(0.0, 1.0 - *value.cosine))
                                  : std::nullopt);
  }
  return series;
}

Series max_abs_errors(const DriftDocument& document) {
  Series series;
  for (const auto& value : document.values) {
    series.push_back(value.max_abs_error);
  }
  return series;
}

std::optional<double> threshold_error(const DriftDocument& document) {
  if (document.threshold_metric != "cosine" || !document.threshold_below) {
    return std::nullopt;
  }
  return 1.0 - *document.threshold_below;
}

struct Panel {
  double top;
  double height;
  LogScale scale;
  double y(double error) const { return top + height * (1 - scale.fraction(error)); }
};

class DriftPicture {
public:
  explicit DriftPicture(DriftDocument document)
      : m_doc(std::move(document)), m_count(m_doc.values.size()),
        m_cosine{k_cosine_top, k_cosine_height,
                 LogScale::fit(one_minus_cosine(m_doc), threshold_error(m_doc))},
        m_abs{k_abs_top, k_abs_height, LogScale::fit(max_abs_errors(m_doc), std::nullopt)} {}

  std::string render();

private:
  double x_of(size_t index) const { return k_left + (index + 0.5) * step(); }
  double step() const { return k_plot_width / static_cast<double>(std::max<size_t>(m_count, 1)); }
  double height() const {
    return k_legend_top + 6 * k_row + 10 +
           static_cast<double>(std::min(m_doc.top_offenders.size(), k_offenders_shown)) * 16 + 16;
  }
  std::string label_of(size_t index, size_t max_chars) const;
  std::string first_below_label() const {
    return m_doc.threshold_below ? "first below " + svg_number(*m_doc.threshold_below, 6) + ": "
                                 : std::string("first crossing: ");
  }

  void header();
  void panel_frame(const Panel& panel, const std::string& title);
  void series(const Panel& panel, const Series& errors, const char* colour);
  void threshold();
  void lanes();
  void lane(int row, const char* label, const char* colour, const std::function<bool(size_t)>& marked);
  void order_axis();
  void first_crossing();
  void offenders();
  void legend();
  void legend_item(double x, double y, const std::string& swatch, const std::string& text);
  void text(double x, double y, const std::string& escaped, const std::string& style = {});

  DriftDocument m_doc;
  size_t m_count;
  Panel m_cosine;
  Panel m_abs;
  std::string m_out;
};

void DriftPicture::text(double x, double y, const std::string& escaped, const std::string& style) {
  m_out += "<text" + attr("x", x) + attr("y", y) + style + ">" + escaped + "</text>\n";
}

std::string DriftPicture::label_of(size_t index, size_t max_chars) const {
  const DriftValue& value = m_doc.values[index];
  std::string label = "#" + std::to_string(value.order) + " " + svg_text(value.node, max_chars);
  if (!value.op_type.empty()) {
    label += " (" + svg_text(value.op_type, 40) + ")";
  }
  if (!value.graph.empty() && value.graph != "main") {
    label += " in " + svg_text(value.graph, max_chars);
  }
  return label;
}

void DriftPicture::header() {
  const std::string h = svg_coordinate(height());
  m_out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
           "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1200\" height=\"" + h +
           "\" viewBox=\"0 0 1200 " + h + "\" font-family=\"DejaVu Sans, Verdana, sans-serif\" "
           "font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  text(k_left, 26,
       "Drift along the graph: " + svg_text(m_doc.low_type, 20) + " against float32, " +
           std::to_string(m_count) + " value" + (m_count == 1 ? "" : "s") + ", " +
           std::to_string(m_doc.sample_sets) + " sample set" + (m_doc.sample_sets == 1 ? "" : "s"),
       " font-size=\"17\" font-weight=\"bold\"");
  std::string line = std::to_string(m_doc.runtime_runs) + " runtime run" +
                     (m_doc.runtime_runs == 1 ? "" : "s") + "; first crossing: ";
  if (m_doc.first_crossing) {
    const size_t at = *m_doc.first_crossing;
    line += label_of(at, 60) + ", 1 \u2212 cosine " + one_minus(m_doc.values[at].cosine);
  } else if (m_count == 0) {
    line += "none, the report holds no value";
  } else {
    line += threshold_error(m_doc) ? "none, every value stays above the threshold" : "no threshold given";
  }
  text(k_left, 46, line, " fill=\"#444444\"");
}

void DriftPicture::panel_frame(const Panel& panel, const std::string& title) {
  for (int decade : panel.scale.tick_decades()) {
    const bool floor = panel.scale.has_floor() && decade == panel.scale.axis_low();
    const double y = floor ? panel.y(0) : panel.y(std::pow(10.0, decade));
    m_out += "<line" + attr("x1", k_left) + attr("y1", y) + attr("x2", k_left + k_plot_width) +
             attr("y2", y) + " stroke=\"" + (floor ? "#999999" : k_grid_colour) + "\"" +
             (floor ? " stroke-dasharray=\"2,3\"" : "") + "/>\n";
    text(k_left - 6, y + 4, svg_text(floor ? panel.scale.floor_label() : decade_label(decade)),
         " text-anchor=\"end\"");
  }
  m_out += "<rect" + attr("x", k_left) + attr("y", panel.top) + attr("width", k_plot_width) +
           attr("height", panel.height) + " fill=\"none\" stroke=\"#333333\"/>\n";
  m_out += "<text transform=\"translate(" + svg_coordinate(k_left - 62) + " " +
           svg_coordinate(panel.top + panel.height / 2) + ") rotate(-90)\" text-anchor=\"middle\">" +
           title + "</text>\n";
}

// The figures as a line, broken where a figure is undefined; a dot per value when few.
void DriftPicture::series(const Panel& panel, const Series& errors, const char* colour) {
  std::string points;
  size_t in_segment = 0;
  auto flush = [&](size_t last) {
    if (in_segment == 1) { // a lone figure between gaps: a dot, or it would not show
      m_out += "<circle" + attr("cx", x_of(last)) + attr("cy", panel.y(*errors[last])) +
               " r=\"2.5\" fill=\"" + colour + "\"/>\n";
    } else if (in_segment > 1) {
      m_out += "<polyline fill=\"none\" stroke=\"" + std::string(colour) +
               "\" stroke-width=\"1.5\" stroke-linejoin=\"round\" points=\"" + points + "\"/>\n";
    }
    points.clear();
    in_segment = 0;
  };
  for (size_t i = 0; i < errors.size(); ++i) {
    if (!errors[i]) {
      flush(i == 0 ? 0 : i - 1);
      continue;
    }
    points += svg_coordinate(x_of(i)) + "," + svg_coordinate(panel.y(*errors[i])) + " ";
    ++in_segment;
  }
  flush(errors.empty() ? 0 : errors.size() - 1);
  if (errors.size() <= k_dots_up_to) {
    for (size_t i = 0; i < errors.size(); ++i) {
      if (errors[i]) {
        m_out += "<circle" + attr("cx", x_of(i)) + attr("cy", panel.y(*errors[i])) +
                 " r=\"2\" fill=\"" + colour + "\"/>\n";
      }
    }
  }
}

void DriftPicture::threshold() {
  const auto error = threshold_error(m_doc);
  if (!error) {
    return;
  }
  const double y = m_cosine.y(*error);
  m_out += "<line" + attr("x1", k_left) + attr("y1", y) + attr("x2", k_left + k_plot_width) +
           attr("y2", y) + " stroke=\"" + k_threshold_colour + "\" stroke-width=\"1.5\" stroke-dasharray=\"6,4\"/>\n";
  text(k_left + k_plot_width - 4, y - 4, "threshold: cosine " + svg_number(*m_doc.threshold_below, 6),
       std::string(" text-anchor=\"end\" fill=\"") + k_threshold_colour + "\"" + k_halo);
}

// Runs of marked values as rectangles, neighbours merged, so thousands of values cost a
// few hundred elements at most.
void DriftPicture::lane(int row, const char* label, const char* colour,
                        const std::function<bool(size_t)>& marked) {
  const double y = k_lanes_top + row * k_lane_pitch;
  text(k_left - 6, y + 10, label, " text-anchor=\"end\" font-size=\"10\"");
  m_out += "<rect" + attr("x", k_left) + attr("y", y) + attr("width", k_plot_width) +
           attr("height", k_lane_height) + " fill=\"#f7f7f7\"/>\n";
  std::optional<std::pair<double, double>> run;
  auto draw = [&] {
    m_out += "<rect" + attr("x", run->first) + attr("y", y) + attr("width", run->second - run->first) +
             attr("height", k_lane_height) + " fill=\"" + colour + "\"/>\n";
  };
  for (size_t i = 0; i < m_count; ++i) {
    if (!marked(i)) {
      continue;
    }
    const double centre = x_of(i);
    const double half = std::max(step(), k_min_mark_width) / 2;
    if (run && centre - half <= run->second + 0.5) {
      run->second = centre + half;
      continue;
    }
    if (run) {
      draw();
    }
    run = std::make_pair(centre - half, centre + half);
  }
  if (run) {
    draw();
  }
}

void DriftPicture::lanes() {
  const auto& values = m_doc.values;
  lane(0, "kept float32", k_kept_colour, [&](size_t i) { return values[i].kept_float32(); });
  lane(1, "overflow", k_overflow_colour, [&](size_t i) { return values[i].overflow_share > 0; });
  lane(2, "flush > 1%", k_flush_colour,
       [&](size_t i) { return values[i].flush_share > k_flush_mark_share; });
  lane(3, "cos undefined", k_undefined_colour, [&](size_t i) { return !values[i].cosine; });
  // Undefined cosines marked in the cosine panel too, where the line breaks for them.
  for (size_t i = 0; i < m_count && m_count <= k_dots_up_to; ++i) {
    if (!values[i].cosine) {
      const double x = x_of(i);
      m_out += "<path d=\"M" + svg_coordinate(x - 4) + " " + svg_coordinate(k_cosine_top + 2) + "l8 8m0 -8l-8 8\" stroke=\"" +
               k_undefined_colour + "\" stroke-width=\"2\"/>\n";
    }
  }
}

void DriftPicture::order_axis() {
  const double y = k_lanes_bottom;
  for (size_t at : order_ticks(m_count)) {
    const double x = x_of(at);
    m_out += "<line" + attr("x1", x) + attr("y1", y) + attr("x2", x) + attr("y2", y + 5) +
             " stroke=\"#333333\"/>\n";
    text(x, y + 17, std::to_string(m_doc.values[at].order), " text-anchor=\"middle\"");
  }
  text(k_left + k_plot_width / 2, y + 35,
       "values in topological order (#: order in the drift report)", " text-anchor=\"middle\"");
  if (m_count == 0) {
    text(k_left + k_plot_width / 2, k_cosine_top + k_cosine_height / 2,
         "no value is stored in low precision: nothing to draw", " text-anchor=\"middle\" font-size=\"14\"");
  }
}

void DriftPicture::first_crossing() {
  if (!m_doc.first_crossing) {
    return;
  }
  const size_t at = *m_doc.first_crossing;
  const double x = x_of(at);
  m_out += "<g><title>first crossing: " + svg_text(m_doc.values[at].node) + "</title>\n<line" +
           attr("x1", x) + attr("y1", k_cosine_top) + attr("x2", x) + attr("y2", k_lanes_bottom) +
           " stroke=\"" + k_threshold_colour + "\" stroke-width=\"1.5\"/>\n";
  const bool left_half = x < k_left + k_plot_width / 2;
  text(left_half ? x + 5 : x - 5, k_cosine_top + 26, first_below_label() + label_of(at, 48),
       std::string(" text-anchor=\"") + (left_half ? "start" : "end") + "\" fill=\"" +
           k_threshold_colour + "\" font-weight=\"bold\"" + k_halo);
  m_out += "</g>\n";
}

// Numbered badges on the cosine line (at the top where the cosine is undefined), above the
// point and staggered, so neighbours stay apart; the names are in the list below.
void DriftPicture::offenders() {
  const size_t shown = std::min(m_doc.top_offenders.size(), k_offenders_shown);
  double y = k_legend_top + 6 * k_row + 10;
  if (shown > 0) {
    text(k_left, y, "Top offenders (the values that add most drift):", " font-weight=\"bold\"");
  }
  for (size_t rank = 0; rank < shown; ++rank) {
    const size_t at = m_doc.top_offenders[rank];
    const DriftValue& value = m_doc.values[at];
    const double point = value.cosine ? m_cosine.y(std::max(0.0, 1.0 - *value.cosine)) : k_cosine_top + 6;
    const double badge = std::max(k_cosine_top + 8, point - 12 - (rank % 2) * 14.0);
    const std::string number = std::to_string(rank + 1);
    m_out += "<g><title>" + svg_text(value.node) + "</title><circle" + attr("cx", x_of(at)) +
             attr("cy", badge) + " r=\"7\" fill=\"" + k_offender_colour + "\"/>";
    text(x_of(at), badge + 3.5, number, " text-anchor=\"middle\" font-size=\"9\" fill=\"#ffffff\"");
    m_out += "</g>\n";
    std::string line = number + ". " + label_of(at, 60) + ": 1 \u2212 cosine " + one_minus(value.cosine);
    if (value.max_abs_error) {
      line += ", max abs error " + svg_number(*value.max_abs_error);
    }
    if (value.added_drift) {
      line += ", added drift " + svg_number(*value.added_drift);
    }
    text(k_left + 8, y + 16 * static_cast<double>(rank + 1), line);
  }
}

void DriftPicture::legend_item(double x, double y, const std::string& swatch, const std::string& label) {
  m_out += "<g transform=\"translate(" + svg_coordinate(x) + " " + svg_coordinate(y) + ")\">" + swatch;
  m_out += "<text x=\"26\" y=\"4\">" + label + "</text></g>\n";
}

void DriftPicture::legend() {
  auto line = [](const char* colour, const char* dash) {
    return std::string("<line x1=\"0\" y1=\"0\" x2=\"20\" y2=\"0\" stroke=\"") + colour +
           "\" stroke-width=\"2\"" + (dash[0] ? std::string(" stroke-dasharray=\"") + dash + "\"" : "") + "/>";
  };
  auto box = [](const char* colour) {
    return std::string("<rect x=\"0\" y=\"-5\" width=\"20\" height=\"10\" fill=\"") + colour + "\"/>";
  };
  const double left = k_left;
  const double right = k_left + k_plot_width / 2;
  double y = k_legend_top;
  legend_item(left, y, line(k_cosine_colour, ""), "1 \u2212 cosine against float32 (top panel)");
  legend_item(right, y, box(k_kept_colour), "kept float32 (stored in full precision)");
  y += k_row;
  legend_item(left, y, line(k_abs_colour, ""), "max abs error against float32 (bottom panel)");
  legend_item(right, y, box(k_overflow_colour), "overflow: some elements beyond the low type's range");
  y += k_row;
  const auto threshold = threshold_error(m_doc);
  legend_item(left, y, line(k_threshold_colour, "6,4"),
              threshold ? "threshold: cosine below " + svg_number(*m_doc.threshold_below, 6) +
                              " (1 \u2212 cosine above " + svg_number(*threshold) + ")"
                        : std::string("no threshold in the report"));
  legend_item(right, y, box(k_flush_colour), "flush: over 1% of non-zero elements become 0");
  y += k_row;
  legend_item(left, y, line(k_threshold_colour, ""), "first crossing of the threshold");
  legend_item(right, y, box(k_undefined_colour),
              "cosine undefined (not compared; never drawn as zero error): \u00d7 and a gap");
  y += k_row;
  legend_item(left, y, "<circle cx=\"10\" cy=\"0\" r=\"6\" fill=\"" + std::string(k_offender_colour) + "\"/>",
              "top offender, numbered as listed below");
  legend_item(right, y, line("#999999", "2,3"),
              "log scale floor: an error of 0 has no place on it and is drawn on this line");
}

std::string DriftPicture::render() {
  header();
  panel_frame(m_cosine, "1 \u2212 cosine (log)");
  panel_frame(m_abs, "max abs error (log)");
  threshold();
  series(m_cosine, one_minus_cosine(m_doc), k_cosine_colour);
  series(m_abs, max_abs_errors(m_doc), k_abs_colour);
  lanes();
  order_axis();
  first_crossing();
  offenders();
  legend();
  m_out += "</svg>\n";
  return std::move(m_out);
}

} // namespace

std::string render_drift_svg(const nlohmann::json& drift) {
  return DriftPicture(read_drift_document(drift)).render();
}

} // namespace npucc::report
