// strata doc show: how strata reads a document's structure (sections, paragraphs, sentences).
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "strata/doc/parse.h"

namespace strata::cli {

namespace {

using Json = nlohmann::ordered_json;  // keys in the order written: title first

struct ShowOptions {
  std::string file;
  std::string format = "auto";
  std::size_t index = 0;
  bool json = false;
};

std::size_t sentences_in(const Section& section) {
  std::size_t n = 0;
  for (const Paragraph& p : section.paragraphs) n += p.sentences.size();
  return n;
}

std::string plural(std::size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// One line per section, indented by depth; counts are the section's own, not its children's.
void print_tree(const Section& section, int depth) {
  const std::string heading = section.heading.empty() ? "(untitled)" : section.heading;
  std::printf("%*s%s  [level %d]  %s, %s\n", 2 * depth, "", heading.c_str(), section.level,
              plural(section.paragraphs.size(), "paragraph").c_str(),
              plural(sentences_in(section), "sentence").c_str());
  for (const Section& child : section.children) print_tree(child, depth + 1);
}

void print_text(const Document& doc) {
  std::printf("%s\n", doc.title.empty() ? "(no title)" : doc.title.c_str());
  std::printf("id: %s\n", doc.id.c_str());
  if (!doc.root.paragraphs.empty())
    std::printf("  (before the first heading)  %s, %s\n",
                plural(doc.root.paragraphs.size(), "paragraph").c_str(),
                plural(sentences_in(doc.root), "sentence").c_str());
  for (const Section& section : doc.root.children) print_tree(section, 1);
  std::printf("total: %s, %s, %s, %s of text\n", plural(doc.section_count(), "section").c_str(),
              plural(doc.paragraph_count(), "paragraph").c_str(),
              plural(doc.sentence_count(), "sentence").c_str(), plural(doc.text.size(), "byte").c_str());
}

Json span_json(Span span) { return Json::array({span.begin, span.end}); }

Json paragraphs_json(const Section& section) {
  Json list = Json::array();
  for (const Paragraph& p : section.paragraphs) {
    Json sentences = Json::array();
    for (Span s : p.sentences) sentences.push_back(span_json(s));
    list.push_back({{"span", span_json(p.span)}, {"sentences", std::move(sentences)}});
  }
  return list;
}

Json sections_json(const Section& parent) {
  Json list = Json::array();
  for (const Section& s : parent.children)
    list.push_back({{"heading", s.heading},
                    {"level", s.level},
                    {"paragraphs", paragraphs_json(s)},
                    {"children", sections_json(s)}});
  return list;
}

Json document_json(const Document& doc) {
  return {{"title", doc.title},
          {"id", doc.id},
          {"counts",
           {{"sections", doc.section_count()},
            {"paragraphs", doc.paragraph_count()},
            {"sentences", doc.sentence_count()},
            {"bytes", doc.text.size()}}},
          {"paragraphs", paragraphs_json(doc.root)},
          {"sections", sections_json(doc.root)}};
}

}  // namespace

void register_doc(CLI::App& app) {
  CLI::App* doc = app.add_subcommand("doc", "Inspect documents as strata reads them");
  doc->require_subcommand(1);
  CLI::App* show = doc->add_subcommand(
      "show",
      "Parse one document (Markdown, man page, plain text or a JSONL dataset line) and print "
      "its title and section tree: each section's heading, tree level and its own paragraph "
      "and sentence counts, then the totals. With --json, print the structure as one JSON "
      "object instead: title, id, counts, the paragraphs before the first heading, and "
      "nested sections {heading, level, paragraphs: [{span: [begin, end], sentences: "
      "[[begin, end], ...]}], children}; spans are byte offsets into the document's text.");
  auto options = std::make_shared<ShowOptions>();
  show->add_option("FILE", options->file,
                   "The document: .md/.markdown, a man page (.1 ... .9, optionally .gz), .txt, "
                   ".jsonl; other names are detected from the content")
      ->required();
  show->add_option("--format", options->format,
                   "How to read FILE: auto (by extension, then content), markdown, man, plain, jsonl")
      ->capture_default_str();
  show->add_option("--index", options->index,
                   "For a JSONL dataset, which document to show (0-based line among the documents)")
      ->capture_default_str();
  show->add_flag("--json", options->json, "Print the structure as one JSON object on stdout");
  on_run(show, [options] {
    const Document document =
        read_document(options->file, format_from_name(options->format), options->index);
    if (options->json)
      std::cout << document_json(document).dump() << '\n';
    else
      print_text(document);
  });
}

}  // namespace strata::cli
