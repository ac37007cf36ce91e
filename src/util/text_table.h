#pragma once

#include <string>
#include <vector>

namespace npucc::util {

// Rows of cells printed in aligned columns, two blanks apart (`inspect`, `cache ls`,
// `config show`): `align` has one letter per column, 'l' (left, the default) or 'r'
// (right, for figures); each line starts with `indent`. A last left-aligned column is
// not padded, so no line ends in blanks.
class TextTable {
public:
  TextTable(std::string align, std::string indent)
      : m_align(std::move(align)), m_indent(std::move(indent)) {}
  // Cells hold names from models and cache entries: control characters are shown escaped
  // (util::printable) before the widths are taken.
  void add_row(std::vector<std::string> cells);
  bool empty() const { return m_rows.empty(); }
  std::string render() const;

private:
  std::string m_align;
  std::string m_indent;
  std::vector<std::vector<std::string>> m_rows;
};

} // namespace npucc::util
