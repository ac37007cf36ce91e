#pragma once

#include <string>
#include <vector>

namespace npucc::inspect {

// Rows of cells printed in aligned columns: `align` has one letter per column,
// 'l' (left) or 'r' (right, for figures); each line starts with `indent`.
class TextTable {
public:
  TextTable(std::string align, std::string indent)
      : m_align(std::move(align)), m_indent(std::move(indent)) {}
  // Cells hold names from the model: control characters are shown escaped.
  void add_row(std::vector<std::string> cells);
  bool empty() const { return m_rows.empty(); }
  std::string render() const;

private:
  std::string m_align;
  std::string m_indent;
  std::vector<std::vector<std::string>> m_rows;
};

// 1234567 -> "1,234,567".
std::string group_digits(uint64_t value);

} // namespace npucc::inspect
