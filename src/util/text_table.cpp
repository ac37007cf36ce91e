#include "util/text_table.h"

#include "util/strings.h"

#include <algorithm>
#include <cstdint>

namespace npucc::util {

void TextTable::add_row(std::vector<std::string> cells) {
  for (auto& cell : cells) {
    cell = util::printable(cell);
  }
  m_rows.push_back(std::move(cells));
}

std::string TextTable::render() const {
  std::vector<size_t> widths;
  for (const auto& row : m_rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i) {
      widths[i] = std::max(widths[i], row[i].size());
    }
  }
  std::string out;
  for (const auto& row : m_rows) {
    std::string line = m_indent;
    for (size_t i = 0; i < row.size(); ++i) {
      bool right = i < m_align.size() && m_align[i] == 'r';
      std::string pad(widths[i] - row[i].size(), ' ');
      if (i > 0) {
        line += "  ";
      }
      line += right ? pad + row[i] : row[i] + (i + 1 < row.size() ? pad : "");
    }
    out += line + "\n";
  }
  return out;
}

} // namespace npucc::util
