#include "strata/doc/document.h"

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/core/strings.h"
#include "strata/doc/sentence_splitter.h"

namespace strata {

namespace {
std::size_t count_paragraphs(const Section& s) {
  std::size_t n = s.paragraphs.size();
  for (const Section& c : s.children) n += count_paragraphs(c);
  return n;
}
std::size_t count_sentences(const Section& s) {
  std::size_t n = 0;
  for (const Paragraph& p : s.paragraphs) n += p.sentences.size();
  for (const Section& c : s.children) n += count_sentences(c);
  return n;
}
}  // namespace

std::size_t Document::section_count() const {
  std::size_t n = 0;
  for_each_section(root, [&](const Section&) { ++n; });
  return n - 1;
}
std::size_t Document::paragraph_count() const { return count_paragraphs(root); }
std::size_t Document::sentence_count() const { return count_sentences(root); }

DocumentBuilder::DocumentBuilder(std::string title) {
  doc_.title = std::move(title);
  doc_.root.heading = doc_.title;
  open_.push_back({&doc_.root, 0});
}

void DocumentBuilder::open_section(std::string heading, int rank) {
  if (++sections_ > kMaxSections)
    throw Error(fmt::format("more than {} sections (the last one headed '{}'): a document this large is refused",
                            kMaxSections, heading.substr(0, 60)));
  if (rank < 1) rank = 1;
  while (open_.size() > 1 && open_.back().second >= rank) open_.pop_back();
  Section* parent = open_.back().first;
  Section child;
  child.heading = std::move(heading);
  child.level = parent->level + 1;
  parent->children.push_back(std::move(child));
  // The open sections lie on one root-to-leaf path and only the innermost one gains a child
  // (after its former children were closed), so no pointer held in open_ is invalidated.
  open_.push_back({&parent->children.back(), rank});
}

void DocumentBuilder::add_paragraph(std::string_view text) {
  text = trim(text);
  if (text.empty()) return;
  if (!doc_.text.empty()) doc_.text += "\n\n";
  const std::size_t offset = doc_.text.size();
  doc_.text.append(text);
  Paragraph paragraph;
  paragraph.span = {offset, offset + text.size()};
  for (Span s : split_sentences(text)) paragraph.sentences.push_back({s.begin + offset, s.end + offset});
  open_.back().first->paragraphs.push_back(std::move(paragraph));
}

Document build_document(std::string title, std::vector<DocumentBlock> blocks) {
  DocumentBuilder builder(std::move(title));
  for (DocumentBlock& block : blocks) {
    if (block.rank > 0)
      builder.open_section(std::move(block.text), block.rank);
    else
      builder.add_paragraph(block.text);
  }
  return builder.finish();
}

Document DocumentBuilder::finish() {
  open_.clear();
  return std::move(doc_);
}

}  // namespace strata
