#include "strata/eval/lead_baseline.h"

#include <algorithm>
#include <cctype>

namespace strata {

namespace {
bool same_heading(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

const Section* find_section(const Section& section, std::string_view heading) {
  if (section.level > 0 && same_heading(section.heading, heading)) return &section;
  for (const Section& child : section.children)
    if (const Section* found = find_section(child, heading)) return found;
  return nullptr;
}
}  // namespace

std::string lead_summary(const Document& document, std::size_t sentences,
                         std::string_view section_heading) {
  const Section* start = &document.root;
  if (!section_heading.empty())
    if (const Section* found = find_section(document.root, section_heading)) start = found;
  std::string out;
  std::size_t taken = 0;
  for_each_section(*start, [&](const Section& section) {
    for (const Paragraph& paragraph : section.paragraphs)
      for (const Span& sentence : paragraph.sentences) {
        if (taken == sentences) return;
        if (taken++ > 0) out += '\n';
        out += document.slice(sentence);
      }
  });
  return out;
}

}  // namespace strata
