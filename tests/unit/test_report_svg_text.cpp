#include "report/svg_text.h"

#include <doctest/doctest.h>

using npucc::report::svg_number;
using npucc::report::svg_text;

TEST_SUITE("npucc::report::svg_text") {

TEST_CASE("markup and quotes in a name become entities") {
  CHECK(svg_text("a<b>&\"'c") == "a&lt;b&gt;&amp;&quot;&apos;c");
  CHECK(svg_text("]]><script>") == "]]&gt;&lt;script&gt;");
}

TEST_CASE("control characters, which XML 1.0 cannot hold, show as \\xNN") {
  CHECK(svg_text(std::string("a\x01\x1b[31m\n\x7f", 9)) == "a\\x01\\x1B[31m\\x0A\\x7F");
  CHECK(svg_text(std::string("\0", 1)) == "\\x00");
  CHECK(svg_text("next\xC2\x85line") == "next\\x85line"); // U+0085, a C1 control
}

TEST_CASE("bytes that are not UTF-8, and U+FFFE, become U+FFFD; UTF-8 stays") {
  const std::string fffd = "\xEF\xBF\xBD";
  CHECK(svg_text("a\xFFz") == "a" + fffd + "z");
  CHECK(svg_text("\xE2\x82") == fffd + fffd);             // cut short
  CHECK(svg_text("\xC0\xAF") == fffd + fffd);             // overlong '/'
  CHECK(svg_text("\xED\xA0\x80") == fffd + fffd + fffd);  // a surrogate
  CHECK(svg_text("\xEF\xBF\xBE") == fffd);                // U+FFFE
  CHECK(svg_text("Conv\xE2\x86\x92\xC3\xBC\xF0\x9F\x98\x80") == "Conv\xE2\x86\x92\xC3\xBC\xF0\x9F\x98\x80");
}

TEST_CASE("a long name is cut at a character, never inside one, and says so") {
  CHECK(svg_text("\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9", 3) == "\xC3\xA9\xC3\xA9\xC3\xA9\xE2\x80\xA6");
  CHECK(svg_text("abc", 3) == "abc");
  CHECK(svg_text(std::string(100000, 'n')).size() < 1010);
}

TEST_CASE("figures: three digits by default, more where a threshold needs them") {
  CHECK(svg_number(0.000123456) == "0.000123");
  CHECK(svg_number(0.9999) == "1");
  CHECK(svg_number(0.9999, 6) == "0.9999");
}

}
