#include "strata/doc/dataset.h"

#include <fmt/format.h>

#include "strata/core/strings.h"
#include "strata/doc/plain_text.h"

#include <string_view>

namespace strata {

namespace {

using nlohmann::json;


// Paragraphs of a flat article. Exports differ: some separate paragraphs by blank lines
// (and may wrap lines inside a paragraph), others put one paragraph per line. Blank lines
// are taken as the separators when one stands between two lines of text; otherwise every
// line is a paragraph.
std::vector<std::string> split_paragraphs(std::string_view text) {
  const std::vector<std::string_view> lines = split_lines(text);
  bool blank_separated = false;
  bool seen_text = false, blank_after_text = false;
  for (std::string_view line : lines) {
    if (trim(line).empty()) {
      blank_after_text = seen_text;
    } else {
      blank_separated = blank_separated || blank_after_text;
      seen_text = true;
    }
  }
  std::vector<std::string> paragraphs;
  std::string current;
  auto flush = [&] {
    if (!current.empty()) paragraphs.push_back(std::move(current));
    current.clear();
  };
  for (std::string_view line : lines) {
    if (trim(line).empty()) {
      flush();
      continue;
    }
    if (!current.empty()) current += '\n';
    current += line;
    if (!blank_separated) flush();
  }
  flush();
  return paragraphs;
}

// One summary sentence per line, trimmed, blank lines dropped: rougeLsum splits on "\n".
std::string join_lines(const std::vector<std::string_view>& lines) {
  std::string out;
  for (std::string_view line : lines) {
    line = trim(line);
    if (line.empty()) continue;
    if (!out.empty()) out += '\n';
    out += line;
  }
  return out;
}

std::string summary_lines(std::string_view text) { return join_lines(split_lines(text)); }

// arXiv/PubMed abstracts wrap each sentence in "<S> ... </S>": a closing tag ends a line.
std::string strip_sentence_tags(const std::vector<std::string>& abstract) {
  std::string text;
  for (const std::string& element : abstract) {
    std::string_view rest = element;
    while (!rest.empty()) {
      if (rest.starts_with("<S>")) {
        rest.remove_prefix(3);
      } else if (rest.starts_with("</S>")) {
        text += '\n';
        rest.remove_prefix(4);
      } else {
        text += rest.front();
        rest.remove_prefix(1);
      }
    }
    text += '\n';
  }
  return summary_lines(text);
}

bool has_any(const json& object, std::initializer_list<const char*> fields) {
  for (const char* field : fields)
    if (object.contains(field)) return true;
  return false;
}

Error unknown_shape(const json& object, const JsonlReader& reader) {
  constexpr std::size_t kMaxListed = 12;  // a line with thousands of keys stays readable
  std::string found;
  std::size_t listed = 0;
  for (const auto& item : object.items()) {
    if (listed == kMaxListed) {
      found += ", …";
      break;
    }
    if (listed++ > 0) found += ", ";
    found += item.key();
  }
  return reader.error("", fmt::format(
      "expected one of the shapes {{article, highlights}} (CNN/DailyMail), {{article, abstract}} "
      "(HF scientific_papers), {{document, summary}} "
      "(XSum), {{article_text, abstract_text, section_names, sections}} (arXiv/PubMed), "
      "{{id, title, paragraphs, sections, summary}} (strata native), {{id, text}} (text; see "
      "docs/formats.md) "
      "(fields found: {})",
      found.empty() ? "none" : found));
}

DatasetShape detect_shape(const json& object, const JsonlReader& reader) {
  // One distinctive field picks the shape, so a line missing the others gets an error
  // naming the missing field rather than "unknown shape".
  if (object.contains("article") && object.contains("abstract") && !object.contains("highlights"))
    return DatasetShape::ArticleAbstract;
  if (has_any(object, {"article", "highlights"})) return DatasetShape::CnnDm;
  if (object.contains("document")) return DatasetShape::DocumentSummary;
  if (has_any(object, {"article_text", "abstract_text", "section_names"}))
    return DatasetShape::ArxivPubmed;
  // Before native: exports such as Wikipedia's {id, url, title, text} carry a title too.
  if (object.contains("text")) return DatasetShape::Text;
  if (has_any(object, {"title", "sections", "paragraphs"})) return DatasetShape::Native;
  throw unknown_shape(object, reader);
}

Document read_flat(const json& object, const JsonlReader& reader, const char* text_field,
                   const char* summary_field) {
  const std::string summary = reader.string_field(object, summary_field);
  Document document = flat_document(reader.string_field(object, text_field));
  document.id = document_id(object, "id", reader.path(), reader.line());
  document.summary = summary_lines(summary);
  return document;
}

// sections: one array of sentence strings per section name.
std::vector<std::vector<std::string>> arxiv_sections(const json& object, const JsonlReader& reader) {
  const auto it = object.find("sections");
  if (it == object.end()) throw reader.error("sections", "missing");
  if (!it->is_array())
    throw reader.error("sections", std::string("expected an array, got ") + it->type_name());
  std::vector<std::vector<std::string>> sections;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& section = (*it)[i];
    const std::string field = fmt::format("sections[{}]", i);
    if (!section.is_array())
      throw reader.error(field, std::string("expected an array of strings, got ") + section.type_name());
    std::vector<std::string>& sentences = sections.emplace_back();
    for (std::size_t j = 0; j < section.size(); ++j) {
      if (!section[j].is_string())
        throw reader.error(fmt::format("{}[{}]", field, j),
                           std::string("expected a string, got ") + section[j].type_name());
      sentences.push_back(section[j].get<std::string>());
    }
  }
  return sections;
}

// Each sentence of the data set becomes a paragraph of its own: the data has no paragraph
// boundaries, and its text is lower-cased and tokenized ("fig . 1 ."), which a rule-based
// splitter cannot re-split reliably, so this keeps the only sentence boundaries it has.
Document read_arxiv(const json& object, const JsonlReader& reader) {
  const std::vector<std::string> names = reader.string_list_field(object, "section_names");
  const std::vector<std::vector<std::string>> sections = arxiv_sections(object, reader);
  if (sections.size() != names.size())
    throw reader.error("sections", fmt::format("has {} entries but section_names has {}",
                                               sections.size(), names.size()));
  const std::vector<std::string> abstract = reader.string_list_field(object, "abstract_text");
  DocumentBuilder builder;
  if (sections.empty() && object.contains("article_text")) {
    // No sections: article_text (the same sentences, unsectioned) is the only body there is.
    for (const std::string& sentence : reader.string_list_field(object, "article_text"))
      builder.add_paragraph(sentence);
  }
  for (std::size_t i = 0; i < sections.size(); ++i) {
    builder.open_section(names[i], 1);
    for (const std::string& sentence : sections[i]) builder.add_paragraph(sentence);
  }
  Document document = builder.finish();
  document.id = document_id(object, "article_id", reader.path(), reader.line());
  document.summary = strip_sentence_tags(abstract);
  return document;
}

// `text` byte for byte as the document's text, so code and roff keep their newlines and
// indentation. Paragraphs are found as in plain text (blank-line separated, trimmed); the
// builder joins them by "\n\n", so each paragraph's span, and its sentences', is moved to
// where the paragraph lies in `text`, at or after its place in the built text.
Document verbatim_document(std::string text) {
  Document document = parse_plain_text(text);
  std::size_t cursor = 0;
  for (Paragraph& paragraph : document.root.paragraphs) {
    const std::size_t begin = text.find(document.slice(paragraph.span), cursor);
    const std::size_t shift = begin - paragraph.span.begin;
    paragraph.span = {begin, paragraph.span.end + shift};
    for (Span& sentence : paragraph.sentences) sentence = {sentence.begin + shift, sentence.end + shift};
    cursor = paragraph.span.end;
  }
  document.text = std::move(text);
  return document;
}

Document read_text(const json& object, const JsonlReader& reader) {
  Document document = verbatim_document(reader.string_field(object, "text"));
  document.id = document_id(object, "id", reader.path(), reader.line());
  return document;
}

}  // namespace

const char* shape_name(DatasetShape shape) {
  switch (shape) {
    case DatasetShape::CnnDm: return "cnn_dailymail";
    case DatasetShape::ArticleAbstract: return "article_abstract";
    case DatasetShape::DocumentSummary: return "document_summary";
    case DatasetShape::ArxivPubmed: return "arxiv_pubmed";
    case DatasetShape::Native: return "native";
    case DatasetShape::Text: return "text";
  }
  return "unknown";
}

std::string document_id(const json& object, std::string_view field,
                        const std::filesystem::path& file, std::size_t line) {
  const auto it = object.find(field);
  if (it == object.end()) return line > 0 ? fmt::format("{}:{}", file.string(), line) : file.string();
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_integer()) return it->dump();
  throw error_at(file, line, field, std::string("expected a string or an integer, got ") + it->type_name());
}

DatasetReader::DatasetReader(std::filesystem::path path) : reader_(std::move(path)) {}

bool DatasetReader::next(Document& document) {
  json object;
  if (!reader_.next(object)) return false;
  shape_ = detect_shape(object, reader_);
  switch (shape_) {
    case DatasetShape::CnnDm: document = read_flat(object, reader_, "article", "highlights"); break;
    case DatasetShape::ArticleAbstract: document = read_flat(object, reader_, "article", "abstract"); break;
    case DatasetShape::DocumentSummary: document = read_flat(object, reader_, "document", "summary"); break;
    case DatasetShape::ArxivPubmed: document = read_arxiv(object, reader_); break;
    case DatasetShape::Native: document = from_native_json(object, reader_); break;
    case DatasetShape::Text: document = read_text(object, reader_); break;
  }
  return true;
}

Document flat_document(std::string_view text) {
  DocumentBuilder builder;
  for (const std::string& paragraph : split_paragraphs(text)) builder.add_paragraph(paragraph);
  return builder.finish();
}

}  // namespace strata
