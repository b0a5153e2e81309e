#pragma once
// Helpers shared by the document tests: the fixtures' folder and a section's paragraphs as text.
#include <filesystem>
#include <string>
#include <vector>

#include "strata/doc/document.h"

namespace strata::test {

inline const std::filesystem::path kDocData = std::filesystem::path(STRATA_FIXTURES_DIR) / "doc";

inline std::vector<std::string> paragraph_texts(const Document& doc, const Section& section) {
  std::vector<std::string> out;
  for (const Paragraph& p : section.paragraphs) out.emplace_back(doc.slice(p.span));
  return out;
}

}  // namespace strata::test
