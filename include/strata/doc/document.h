#pragma once
// A document with structure: a title, a tree of sections, each holding paragraphs of
// sentences. All spans are byte offsets into Document::text, the document's plain text
// (for man pages and Markdown: the rendered text, without markup).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

struct Span {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::size_t size() const { return end - begin; }
  bool operator==(const Span&) const = default;
};

struct Paragraph {
  Span span;
  std::vector<Span> sentences;
};

struct Section {
  std::string heading;
  int level = 0;  // depth in the tree: 0 is the document root, 1 a top-level section
  std::vector<Paragraph> paragraphs;
  std::vector<Section> children;
};

struct Document {
  std::string id;
  std::string title;
  std::string text;     // paragraphs joined by "\n\n"; headings live in Section::heading
  Section root;         // level 0; holds the paragraphs before the first heading
  std::string summary;  // the reference summary, when the source has one

  std::string_view slice(Span span) const {
    return std::string_view(text).substr(span.begin, span.size());
  }
  std::size_t section_count() const;   // sections below the root
  std::size_t paragraph_count() const;
  std::size_t sentence_count() const;
  bool empty() const { return text.empty(); }
};

// Visits every section in document order (pre-order), root first.
template <class F>
void for_each_section(const Section& section, F&& visit) {
  visit(section);
  for (const Section& child : section.children) for_each_section(child, visit);
}

// A heading (rank > 0, as DocumentBuilder::open_section takes it) or a paragraph (rank 0):
// what parsers collect when the title is known only at the end.
struct DocumentBlock {
  int rank = 0;
  std::string text;
};

// Builds a Document paragraph by paragraph, splitting sentences as it goes. Parsers of
// every format use it, so offsets and nesting follow one rule.
class DocumentBuilder {
 public:
  explicit DocumentBuilder(std::string title = {});
  DocumentBuilder(const DocumentBuilder&) = delete;  // holds pointers into its document
  DocumentBuilder& operator=(const DocumentBuilder&) = delete;

  // More sections than any document has (a long manual has a few thousand): a text with more
  // is refused, as a broken or hostile input, before it takes the memory it asks for.
  static constexpr std::size_t kMaxSections = 100'000;

  // Opens a section. `rank` is the heading's rank in the source (1 for '#', 2 for '##', …).
  // strata::Error past kMaxSections.
  // The section becomes a child of the nearest open section of smaller rank, so a skipped
  // rank (# then ###) nests one level deeper instead of failing.
  void open_section(std::string heading, int rank);

  // Appends a paragraph to the innermost open section and splits it into sentences.
  // Leading/trailing whitespace is trimmed; an all-whitespace paragraph is ignored.
  void add_paragraph(std::string_view text);

  Document finish();

 private:
  Document doc_;
  std::vector<std::pair<Section*, int>> open_;  // (section, rank); root has rank 0
  std::size_t sections_ = 0;
};

Document build_document(std::string title, std::vector<DocumentBlock> blocks);

}  // namespace strata
