#include "strata/data/manpage_qs.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>
#include <utility>
#include <vector>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/strings.h"
#include "strata/doc/dataset.h"

namespace strata {

namespace {

// Sections that say nothing about what the page documents, or restate its NAME line.
constexpr std::array<std::string_view, 21> kDroppedHeadings = {
    "NAME",          "SYNOPSIS",  "SEE ALSO",     "AUTHOR",          "AUTHORS",     "COPYRIGHT",
    "LICENSE",       "COPYRIGHT AND LICENSE",     "REPORTING BUGS",  "COLOPHON",    "AVAILABILITY",
    "LIBRARY",       "ATTRIBUTES",  "STANDARDS",  "CONFORMING TO",   "VERSION",     "VERSIONS",
    "HISTORY",       "SUPPORT",     "TRANSLATION", "AUTHOR AND COPYRIGHT"};

// The question of a common top-level heading; "{}" is the page's name.
constexpr std::array<std::pair<std::string_view, std::string_view>, 19> kQuestionTemplates = {{
    {"DESCRIPTION", "What does {} do?"},
    {"OPTIONS", "Which options does {} take?"},
    {"ARGUMENTS", "Which arguments does {} take?"},
    {"COMMANDS", "Which commands does {} accept?"},
    {"RETURN VALUE", "What does {} return?"},
    {"RETURN VALUES", "What does {} return?"},
    {"ERRORS", "Which errors can {} report?"},
    {"EXIT STATUS", "What does the exit status of {} mean?"},
    {"DIAGNOSTICS", "Which diagnostics does {} give?"},
    {"EXAMPLES", "How is {} used?"},
    {"EXAMPLE", "How is {} used?"},
    {"NOTES", "What else should one know about {}?"},
    {"BUGS", "What are the known problems of {}?"},
    {"CAVEATS", "What should one be careful about with {}?"},
    {"FILES", "Which files does {} use?"},
    {"ENVIRONMENT", "Which environment variables affect {}?"},
    {"CONFIGURATION", "How is {} configured?"},
    {"SYNTAX", "What is the syntax of {}?"},
    {"METHODS", "Which methods does {} provide?"},
}};

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool dropped(std::string_view heading) {
  return std::any_of(kDroppedHeadings.begin(), kDroppedHeadings.end(),
                     [&](std::string_view known) { return equals_ignoring_case(trim(heading), known); });
}

std::string heading_question(std::string_view heading, const std::string& name) {
  for (const auto& [known, question] : kQuestionTemplates)
    if (equals_ignoring_case(trim(heading), known)) return fmt::format(fmt::runtime(question), name);
  return fmt::format("What about {} in {}?", lower(trim(heading)), name);
}

// The first sentence of the section's own paragraphs with enough words, cut to the budget.
std::string first_sentence(const Document& page, const Section& section, const ManpageQsOptions& options) {
  for (const Paragraph& paragraph : section.paragraphs) {
    for (const Span& span : paragraph.sentences) {
      const std::vector<std::string_view> words = split_words(page.slice(span));
      if (words.size() < options.min_sentence_words) continue;
      std::string summary;
      for (std::size_t w = 0; w < std::min(words.size(), options.max_summary_words); ++w)
        summary += (w ? " " : "") + std::string(words[w]);
      return summary;
    }
  }
  return {};
}

// The pair of a kept section and its subtree, and the section's text for the document.
struct KeptSection {
  QsNode pair;
  std::vector<DocumentBlock> blocks;  // heading paragraph, own paragraphs, subsections'
};

void add_section_blocks(const Document& page, const Section& section, int rank, std::vector<DocumentBlock>& blocks) {
  blocks.push_back({rank, section.heading});
  blocks.push_back({0, section.heading});  // the heading as text: a model sees no heading otherwise
  for (const Paragraph& paragraph : section.paragraphs) blocks.push_back({0, std::string(page.slice(paragraph.span))});
}

std::optional<KeptSection> keep_section(const Document& page, const Section& section, const std::string& name,
                                        const ManpageQsOptions& options) {
  KeptSection kept;
  kept.pair.question = heading_question(section.heading, name);
  kept.pair.summary = first_sentence(page, section, options);
  add_section_blocks(page, section, 1, kept.blocks);
  for (const Section& sub : section.children) {
    if (kept.pair.children.size() == options.max_subsections) break;
    QsNode child{fmt::format("What about {}?", trim(sub.heading)), first_sentence(page, sub, options), {}};
    if (child.summary.empty()) continue;
    kept.pair.children.push_back(std::move(child));
    add_section_blocks(page, sub, 2, kept.blocks);
  }
  if (kept.pair.summary.empty() && kept.pair.children.empty()) return std::nullopt;
  return kept;
}

}  // namespace

std::string manpage_name(const std::string& id) {
  const std::size_t paren = id.find('(');
  return paren == std::string::npos || paren == 0 ? id : id.substr(0, paren);
}

std::optional<QsExample> manpage_qs_example(const Document& page, const std::string& name,
                                            const ManpageQsOptions& options) {
  if (trim(page.summary).empty()) return std::nullopt;
  QsNode root{fmt::format("What is {}?", name), std::string(trim(page.summary)), {}};
  std::vector<DocumentBlock> blocks;
  for (const Section& section : page.root.children) {
    if (root.children.size() == options.max_sections) break;
    if (dropped(section.heading)) continue;
    std::optional<KeptSection> kept = keep_section(page, section, name, options);
    if (!kept) continue;
    root.children.push_back(std::move(kept->pair));
    for (DocumentBlock& block : kept->blocks) blocks.push_back(std::move(block));
  }
  if (root.children.size() < options.min_sections) return std::nullopt;
  QsExample example;
  example.id = page.id;
  example.document = build_document(page.title, std::move(blocks));
  example.hierarchy.roots.push_back(std::move(root));
  return example;
}

nlohmann::ordered_json build_manpage_qs(const std::filesystem::path& corpus_dir, const std::filesystem::path& out_dir,
                                        const ManpageQsOptions& options) {
  nlohmann::ordered_json stats;
  std::vector<std::pair<std::filesystem::path, std::string>> files;  // written once every split is read
  for (const char* split : {"train", "validation", "test"}) {
    const std::filesystem::path in = corpus_dir / (std::string(split) + ".jsonl");
    DatasetReader reader(in);
    std::string lines;
    std::size_t pages = 0, examples = 0, pairs = 0, edges = 0, deep = 0, document_words = 0, target_words = 0;
    Document page;
    while (reader.next(page)) {
      ++pages;
      const std::optional<QsExample> example = manpage_qs_example(page, manpage_name(page.id), options);
      if (!example) continue;
      ++examples;
      const QsHierarchy& h = example->hierarchy;
      pairs += h.size();
      edges += h.edges();
      for (const QsNode& section : h.roots[0].children) deep += section.children.size();
      document_words += split_words(example->document.text).size();
      target_words += split_words(linearize(h)).size();
      lines += qs_example_json(*example).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    }
    if (examples == 0) throw error_at(in, 0, "", fmt::format("no page of {} yields a QS hierarchy", pages));
    files.emplace_back(out_dir / (std::string(split) + ".jsonl"), std::move(lines));
    const auto mean = [&](std::size_t total) { return static_cast<double>(total) / static_cast<double>(examples); };
    stats[split] = {{"pages", pages},
                    {"examples", examples},
                    {"pairs_mean", mean(pairs)},
                    {"edges_mean", mean(edges)},
                    {"subsection_pairs_mean", mean(deep)},
                    {"document_words_mean", mean(document_words)},
                    {"target_words_mean", mean(target_words)}};
  }
  stats["options"] = {{"max_sections", options.max_sections},
                      {"max_subsections", options.max_subsections},
                      {"min_sections", options.min_sections},
                      {"min_sentence_words", options.min_sentence_words},
                      {"max_summary_words", options.max_summary_words}};
  files.emplace_back(out_dir / "stats.json", stats.dump(2) + "\n");
  std::filesystem::create_directories(out_dir);
  for (const auto& [path, contents] : files) write_file_atomic(path, contents);
  return stats;
}

}  // namespace strata
