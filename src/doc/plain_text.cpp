#include "strata/doc/plain_text.h"

namespace strata {

namespace {
bool is_blank_line(std::string_view line) {
  return line.find_first_not_of(" \t\r\f\v") == std::string_view::npos;
}
}  // namespace

// Each paragraph keeps its lines as written (including their newlines); lines holding only
// whitespace separate paragraphs. The builder trims each paragraph.
Document parse_plain_text(std::string_view text) {
  DocumentBuilder builder;
  std::size_t paragraph_begin = std::string_view::npos;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    if (is_blank_line(text.substr(begin, end - begin))) {
      if (paragraph_begin != std::string_view::npos)
        builder.add_paragraph(text.substr(paragraph_begin, begin - paragraph_begin));
      paragraph_begin = std::string_view::npos;
    } else if (paragraph_begin == std::string_view::npos) {
      paragraph_begin = begin;
    }
    begin = end + 1;
  }
  if (paragraph_begin != std::string_view::npos) builder.add_paragraph(text.substr(paragraph_begin));
  return builder.finish();
}

}  // namespace strata
