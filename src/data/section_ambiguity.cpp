#include "strata/data/section_ambiguity.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/progress.h"
#include "strata/core/strings.h"
#include "strata/data/corpus_stats.h"
#include "strata/data/manpage_corpus.h"
#include "strata/doc/manpage.h"
#include "strata/eval/bleu.h"

namespace strata {

namespace fs = std::filesystem;

namespace {


// The role man(7) gives each section, as the question names it.
const char* section_role(char digit) {
  switch (digit) {
    case '1': return "user command";
    case '2': return "system call";
    case '3': return "library function";
    case '4': return "special file";
    case '5': return "file format";
    case '6': return "game";
    case '7': return "overview";
    case '8': return "administration command";
    case '9': return "kernel routine";
    default: return nullptr;
  }
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alnum(char c) { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Characters of a page name ("tc-hfsc", "EVP_RAND", "fpcmake-3.2.2", "Net::DNS"): a
// reference's name is the longest run of them before "(", so "fprintf(3)" never reads as
// printf(3). ASCII only: no installed page name has other letters.
bool is_name_char(char c) {
  return is_alnum(c) || c == '_' || c == '-' || c == '.' || c == ':' || c == '+';
}

// "name(k...)" in text: [begin, name_end) is the name, [name_end, end) the "(k...)".
struct Reference {
  std::size_t begin = 0, name_end = 0, end = 0;
  char digit = 0;
};

std::vector<Reference> find_references(std::string_view text) {
  std::vector<Reference> references;
  for (std::size_t open = 0; open + 2 < text.size(); ++open) {
    if (text[open] != '(' || !is_digit(text[open + 1])) continue;
    std::size_t close = open + 2;
    while (close < text.size() && is_alnum(text[close])) ++close;
    if (close >= text.size() || text[close] != ')') continue;
    std::size_t begin = open;
    while (begin > 0 && is_name_char(text[begin - 1])) --begin;
    if (begin == open) continue;
    references.push_back({begin, open, close + 1, text[open + 1]});
  }
  return references;
}

std::string_view name_of(std::string_view text, const Reference& r) {
  return text.substr(r.begin, r.name_end - r.begin);
}

// ---- which pages exist ---------------------------------------------------------------

// A page file's name and section as `man` resolves them: "printf.3.gz" → ("printf", "3").
struct PageFile {
  std::string name, section;
  fs::path path;
};

std::optional<PageFile> page_file(const fs::path& path) {
  std::string file = path.filename().string();
  for (std::string_view ext : {".gz", ".bz2", ".xz", ".Z"})
    if (file.size() > ext.size() && file.ends_with(ext)) {
      file.resize(file.size() - ext.size());
      break;
    }
  const std::size_t dot = file.find_last_of('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 >= file.size() || !section_role(file[dot + 1]))
    return std::nullopt;
  return PageFile{file.substr(0, dot), file.substr(dot + 1), path};
}

// Every page file under root/man*/, sorted so that nothing depends on readdir's order.
std::vector<PageFile> list_page_files(const fs::path& root) {
  std::vector<PageFile> pages;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return pages;
  for (const auto& dir : fs::directory_iterator(root)) {
    if (!dir.is_directory() || dir.path().filename().string().rfind("man", 0) != 0) continue;
    for (const auto& file : fs::directory_iterator(dir.path()))
      if (file.is_regular_file() || file.is_symlink())
        if (auto page = page_file(file.path())) pages.push_back(std::move(*page));
  }
  std::sort(pages.begin(), pages.end(), [](const PageFile& a, const PageFile& b) { return a.path < b.path; });
  return pages;
}

// name → section digit → the page `man name.k` would show: the one whose section is exactly
// the digit ("printf.3" before "printf.3p"), else the first by path.
using PageIndex = std::map<std::string, std::map<char, PageFile>, std::less<>>;

PageIndex index_pages(const std::vector<PageFile>& pages) {
  PageIndex index;
  for (const PageFile& page : pages) {
    auto [at, added] = index[page.name].try_emplace(page.section[0], page);
    if (!added && at->second.section.size() > 1 && page.section.size() == 1) at->second = page;
  }
  return index;
}

// ---- targets -----------------------------------------------------------------------------

// The NAME line of a page, following `.so` includes (resolved as man does: against the
// language's root, else beside the page). Translated pages head the section "NOM",
// "BEZEICHNUNG", "NOMBRE", which the parser does not take for NAME: their NAME line is then
// the first top-level section when it reads "name - description". Empty when none parses.
std::string name_line_of(const fs::path& path, const fs::path& root, int depth = 0) {
  ManPage page;
  try {
    page = read_manpage(path);
  } catch (const Error&) {
    return {};
  }
  if (!page.alias_of.empty()) {
    if (depth >= 4) return {};
    const fs::path target(page.alias_of);
    for (const fs::path& base : {root / target, path.parent_path() / target.filename()})
      for (const char* ext : {"", ".gz"}) {
        fs::path candidate = base;
        candidate += ext;
        std::error_code ec;
        if (fs::is_regular_file(candidate, ec)) return name_line_of(candidate, root, depth + 1);
      }
    return {};
  }
  if (!page.name_line.empty()) return join_tokens(page.name_line);
  const auto& top = page.document.root.children;
  if (top.empty() || top.front().level != 1) return {};
  std::string line;
  for (const Paragraph& p : top.front().paragraphs) line.append(page.document.slice(p.span)).append(" ");
  line = join_tokens(line);
  for (std::string_view separator : {" - ", " -- ", " \u2014 ", " \u2013 "})
    if (line.find(separator) != std::string::npos) return line;
  return {};
}

// ---- mentions ------------------------------------------------------------------------------

struct Candidate {
  std::string id, name, source, context, mentioned_in, page_name;
  std::string paragraph;  // as read: what tells one installed copy of a text from another
  char digit = 0;
  std::string split;
};

struct PageScan {
  std::string skip;  // "alias", "unreadable"; empty when scanned
  std::vector<Candidate> candidates;
  std::map<std::string, std::size_t> skipped;  // mentions, by reason
  std::size_t found = 0;
  std::size_t contexts_cut = 0;  // contexts past max_context_words, cut to the sentences nearest
};

using Senses = std::map<std::string, std::vector<char>, std::less<>>;  // ambiguous name → digits

bool is_skipped_heading(const Section& section) {
  const std::string_view heading = trim(section.heading);
  // NAME is the answer itself; SEE ALSO is a bare list of references, no sentence.
  return (section.level == 1 && equals_ignoring_case(heading, "NAME")) ||
         equals_ignoring_case(heading, "SEE ALSO");
}

// Words of `sentence` once `name`'s references are stripped and the other references removed:
// "See kill(2) and printf(3)." has 2 words about printf, too few to tell anything.
std::size_t own_words(std::string_view sentence, std::string_view name) {
  std::string kept;
  std::size_t at = 0;
  for (const Reference& r : find_references(sentence)) {
    if (name_of(sentence, r) == name) continue;
    kept.append(sentence.substr(at, r.begin - at)).append(" ");
    at = r.end;
  }
  kept.append(sentence.substr(at));
  return count_words(kept);
}

class PageScanner {
 public:
  PageScanner(const Senses& senses, const ManPage& page, std::string file_id, char page_digit,
              std::string file_name, std::size_t max_context_words, PageScan& out)
      : senses_(senses), page_(page), file_id_(std::move(file_id)), page_digit_(page_digit),
        file_name_(std::move(file_name)), max_context_words_(max_context_words), out_(out) {}

  void scan(const Section& section, bool skip) {
    skip = skip || is_skipped_heading(section);
    for (std::size_t i = 0; i < section.paragraphs.size(); ++i) {
      ++paragraph_;
      if (!skip) scan_paragraph(section, i);
    }
    for (const Section& child : section.children) scan(child, skip);
  }

 private:
  // The paragraph; a paragraph that is the sentence alone ("See also kill(2) for the
  // signals.", an option's one-line description) tells nothing more, so the paragraphs
  // before and after it in the same section join it. Past max_context_words, the sentences
  // nearest the mention (one before, one after, in turn) as many as fit: AmbigMT's context is
  // a few neighbouring sentences too, and a model reads a bounded prompt.
  std::string context_of(const Section& section, std::size_t i, std::size_t sentence) {
    const Document& doc = page_.document;
    const bool alone = section.paragraphs[i].sentences.size() == 1;
    const std::size_t first = alone && i > 0 ? i - 1 : i;
    const std::size_t last = alone && i + 1 < section.paragraphs.size() ? i + 1 : i;
    struct Piece {
      std::string_view text;
      std::size_t paragraph, words;
    };
    std::vector<Piece> pieces;
    std::size_t mention = 0, words = 0;
    for (std::size_t k = first; k <= last; ++k)
      for (std::size_t t = 0; t < section.paragraphs[k].sentences.size(); ++t) {
        if (k == i && t == sentence) mention = pieces.size();
        const std::string_view text = doc.slice(section.paragraphs[k].sentences[t]);
        pieces.push_back({text, k, count_words(text)});
        words += pieces.back().words;
      }
    std::string context;
    if (max_context_words_ == 0 || words <= max_context_words_) {
      for (std::size_t k = first; k <= last; ++k) {
        if (!context.empty()) context += "\n\n";
        context.append(doc.slice(section.paragraphs[k].span));
      }
      return context;
    }
    ++out_.contexts_cut;
    std::size_t lo = mention, hi = mention, kept = pieces[mention].words;
    for (bool grew = true; grew;) {
      grew = false;
      if (lo > 0 && kept + pieces[lo - 1].words <= max_context_words_) kept += pieces[--lo].words, grew = true;
      if (hi + 1 < pieces.size() && kept + pieces[hi + 1].words <= max_context_words_)
        kept += pieces[++hi].words, grew = true;
    }
    for (std::size_t k = lo; k <= hi; ++k) {
      if (k > lo) context += pieces[k].paragraph == pieces[k - 1].paragraph ? " " : "\n\n";
      context.append(pieces[k].text);
    }
    return context;
  }

  void scan_paragraph(const Section& section, std::size_t index) {
    const Document& doc = page_.document;
    const Paragraph& paragraph = section.paragraphs[index];
    for (std::size_t s = 0; s < paragraph.sentences.size(); ++s) {
      const std::string_view sentence = doc.slice(paragraph.sentences[s]);
      // The ambiguous names cited in the sentence, each with the sections it is cited with.
      std::map<std::string_view, std::set<char>> cited;
      for (const Reference& r : find_references(sentence)) {
        const auto known = senses_.find(name_of(sentence, r));
        if (known == senses_.end()) continue;
        if (std::find(known->second.begin(), known->second.end(), r.digit) != known->second.end())
          cited[name_of(sentence, r)].insert(r.digit);
      }
      for (const auto& [name, digits] : cited) {
        ++out_.found;
        const char digit = *digits.begin();
        if (digits.size() > 1) {
          ++out_.skipped["two_sections_in_sentence"];  // "kill(1) and kill(2)": no single answer
        } else if (digit == page_digit_ && (name == page_.name || name == file_name_)) {
          ++out_.skipped["self_mention"];
        } else if (own_words(sentence, name) < 4) {
          ++out_.skipped["short_sentence"];
        } else if (max_context_words_ > 0 && count_words(sentence) > max_context_words_) {
          ++out_.skipped["long_sentence"];  // a table or a run-on list, not a sentence to translate
        } else {
          Candidate c;
          c.id = fmt::format("{}:{}:{}.{}", file_id_, name, paragraph_, s + 1);
          c.name = std::string(name);
          c.digit = digit;
          c.source = strip_section_references(sentence, name);
          c.paragraph = std::string(doc.slice(paragraph.span));
          c.context = strip_section_references(context_of(section, index, s), name);
          c.mentioned_in = doc.title;
          c.page_name = page_.name;
          out_.candidates.push_back(std::move(c));
        }
      }
    }
  }

  const Senses& senses_;
  const ManPage& page_;
  std::string file_id_;
  char page_digit_;
  std::string file_name_;
  std::size_t max_context_words_;
  PageScan& out_;
  std::size_t paragraph_ = 0;  // 1-based, over the whole page, skipped sections included
};

PageScan scan_page(const PageFile& file, const fs::path& root, const Senses& senses, std::size_t max_context_words) {
  PageScan scan;
  if (fs::is_symlink(file.path)) {
    scan.skip = "alias";
    return scan;
  }
  ManPage page;
  try {
    page = read_manpage(file.path);
  } catch (const Error&) {
    scan.skip = "unreadable";
    return scan;
  }
  if (!page.alias_of.empty()) {
    scan.skip = "alias";
    return scan;
  }
  // "man3/printf.3": unique under the root, stable, and tells where the sentence was read.
  std::string file_id = fs::relative(file.path, root).generic_string();
  if (file_id.ends_with(".gz")) file_id.resize(file_id.size() - 3);
  const char digit = !page.section.empty() && is_digit(page.section[0]) ? page.section[0] : file.section[0];
  PageScanner(senses, page, std::move(file_id), digit, file.name, max_context_words, scan)
      .scan(page.document.root, false);
  return scan;
}

// ---- choosing and counting -------------------------------------------------------------

// Keeps at most `cap` mentions per (split, name, section): those of smallest stable_hash(id),
// a draw that does not depend on page order. Returns how many were dropped.
std::size_t cap_per_sense(std::vector<Candidate>& candidates, std::size_t cap) {
  if (cap == 0) return 0;
  std::map<std::tuple<std::string, std::string, char>, std::vector<std::pair<std::uint64_t, std::size_t>>> groups;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    groups[{c.split, c.name, c.digit}].push_back({stable_hash(c.id), i});
  }
  std::vector<bool> keep(candidates.size(), false);
  for (auto& [key, members] : groups) {
    std::sort(members.begin(), members.end());
    for (std::size_t k = 0; k < members.size() && k < cap; ++k) keep[members[k].second] = true;
  }
  std::vector<Candidate> kept;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (keep[i]) kept.push_back(std::move(candidates[i]));
  const std::size_t dropped = candidates.size() - kept.size();
  candidates = std::move(kept);
  return dropped;
}

// A name's section digits as the strings the records and stats.json give: {'1', '3'} → {"1", "3"}.
std::vector<std::string> section_names(const std::vector<char>& digits) {
  std::vector<std::string> sections;
  for (char d : digits) sections.emplace_back(1, d);
  return sections;
}

nlohmann::ordered_json record(const Candidate& c, const Senses& senses,
                              const std::map<std::pair<std::string, char>, nlohmann::ordered_json>& targets) {
  const std::vector<std::string> sections = section_names(senses.find(c.name)->second);
  nlohmann::ordered_json line;
  line["id"] = c.id;
  line["name"] = c.name;
  line["section"] = std::string(1, c.digit);
  line["sections"] = sections;
  line["source"] = c.source;
  line["context"] = c.context;
  line["question"] = section_question(c.name, sections);
  line["answer"] = std::string(1, c.digit);
  line["targets"] = targets.at({c.name, c.digit});
  line["mentioned_in"] = c.mentioned_in;
  return line;
}

}  // namespace

std::string strip_section_references(std::string_view text, std::string_view name) {
  std::string out;
  std::size_t at = 0;
  for (const Reference& r : find_references(text)) {
    if (name_of(text, r) != name) continue;
    out.append(text.substr(at, r.name_end - at));
    at = r.end;
  }
  out.append(text.substr(at));
  return out;
}

std::string section_question(std::string_view name, const std::vector<std::string>& sections) {
  std::string question = fmt::format("Is \"{}\"", name);
  for (std::size_t i = 0; i < sections.size(); ++i) {
    const char* role = sections[i].empty() ? nullptr : section_role(sections[i][0]);
    if (!role) throw Error(fmt::format("section_question: '{}' is not a man section", sections[i]));
    question += i == 0 ? " " : i + 1 == sections.size() ? " or " : ", ";
    question += fmt::format("the {} ({})", role, sections[i]);
  }
  return question + "?";
}

nlohmann::json build_section_ambiguity(const SectionAmbiguityOptions& options, const fs::path& out_dir) {
  if (options.validation_percent < 0 || options.test_percent < 0 ||
      options.validation_percent + options.test_percent > 100)
    throw Error(fmt::format("validation_percent {} and test_percent {}: each must be >= 0 and their sum <= 100",
                            options.validation_percent, options.test_percent));
  if (!fs::is_directory(options.man_root)) throw Error(options.man_root.string() + ": no such man directory");
  const std::vector<PageFile> files = list_page_files(options.man_root);
  const PageIndex english = index_pages(files);
  Senses senses;
  for (const auto& [name, by_digit] : english)
    if (by_digit.size() >= 2)
      for (const auto& [digit, page] : by_digit) senses[name].push_back(digit);
  if (senses.empty())
    throw Error(options.man_root.string() + ": no page name lives in two sections (" +
                std::to_string(files.size()) + " pages found)");

  std::vector<PageScan> scans(files.size());
  Progress progress("scanning man pages for section references", files.size(), "pages", options.quiet);
#pragma omp parallel for schedule(dynamic, 16)
  for (std::size_t i = 0; i < files.size(); ++i) {
    scans[i] = scan_page(files[i], options.man_root, senses, options.max_context_words);
    progress.add();
  }
  progress.finish();

  // Merged in page order, so the first of identical mentions is kept whatever the threads did.
  std::map<std::string, std::size_t> pages_skipped, mentions_skipped, dropped;
  std::size_t pages_scanned = 0, found = 0, contexts_cut = 0;
  std::unordered_set<std::string> seen;
  std::vector<Candidate> candidates;
  for (PageScan& scan : scans) {
    if (!scan.skip.empty()) {
      ++pages_skipped[scan.skip];
      continue;
    }
    ++pages_scanned;
    found += scan.found;
    contexts_cut += scan.contexts_cut;
    for (const auto& [reason, n] : scan.skipped) mentions_skipped[reason] += n;
    for (Candidate& c : scan.candidates) {
      // One name asked about one text once: the same paragraph is often installed twice, and
      // boilerplate ("see attributes(7)") repeats on hundreds of pages. Keyed by the paragraph,
      // not the context, so a boilerplate line with different neighbours is still one mention.
      if (!seen.insert(c.name + '\0' + c.source + '\0' + c.paragraph).second) {
        ++mentions_skipped["duplicate"];
        continue;
      }
      c.split = split_of(c.page_name, options.validation_percent, options.test_percent);
      candidates.push_back(std::move(c));
    }
  }
  scans.clear();
  dropped["max_per_sense"] = cap_per_sense(candidates, options.max_per_sense);

  // A sense never seen in training cannot be learned: a name needs two of its senses in train
  // (else the question has one answer there), and a record's answer must be one of them.
  std::map<std::string, std::set<char>> trained;
  for (const Candidate& c : candidates)
    if (c.split == "train") trained[c.name].insert(c.digit);
  std::set<std::string> names_dropped;
  std::vector<Candidate> kept;
  for (Candidate& c : candidates) {
    const auto t = trained.find(c.name);
    if (t == trained.end() || t->second.size() < 2) {
      ++dropped["fewer_than_two_senses_in_train"];
      names_dropped.insert(c.name);
    } else if (!t->second.count(c.digit)) {
      ++dropped["answer_sense_not_in_train"];
    } else {
      kept.push_back(std::move(c));
    }
  }
  candidates = std::move(kept);

  // Targets: the NAME line of the page each sense names, in English and in each language.
  std::vector<std::pair<std::string, PageIndex>> languages;
  for (const std::string& language : options.languages)
    languages.emplace_back(language, index_pages(list_page_files(options.man_root / language)));
  std::map<std::pair<std::string, char>, nlohmann::ordered_json> targets;
  std::map<std::string, std::size_t> senses_with_target;
  std::vector<std::string> without_name_line;  // target pages found whose NAME line did not parse
  for (const auto& [name, digits] : senses)
    for (char digit : digits) {
      nlohmann::ordered_json t = nlohmann::ordered_json::object();
      // A named capture: clang before 16 cannot capture structured bindings (make fuzz builds with it).
      const auto add = [&, &name = name](const std::string& language, const PageIndex& index, const fs::path& root) {
        const auto by_name = index.find(name);
        if (by_name == index.end()) return;
        const auto page = by_name->second.find(digit);
        if (page == by_name->second.end()) return;
        std::string line = name_line_of(page->second.path, root);
        if (line.empty()) {
          without_name_line.push_back(fs::relative(page->second.path, options.man_root).generic_string());
          return;
        }
        t[language] = std::move(line);
        ++senses_with_target[language];
      };
      add("en", english, options.man_root);
      for (const auto& [language, index] : languages) add(language, index, options.man_root / language);
      targets[{name, digit}] = std::move(t);
    }

  fs::create_directories(out_dir);
  nlohmann::json stats;
  stats["source"] = options.man_root.string();
  stats["languages"] = options.languages;
  stats["max_per_sense"] = options.max_per_sense;
  stats["max_context_words"] = options.max_context_words;
  stats["validation_percent"] = options.validation_percent;
  stats["test_percent"] = options.test_percent;
  stats["pages_found"] = files.size();
  stats["pages_scanned"] = pages_scanned;
  stats["pages_skipped"] = pages_skipped;
  stats["ambiguous_names"] = senses.size();
  std::size_t sense_count = 0;
  for (const auto& [name, digits] : senses) {
    sense_count += digits.size();
    stats["names"][name] = section_names(digits);
  }
  stats["senses"] = sense_count;
  stats["senses_with_target"] = senses_with_target;
  stats["target_pages_without_name_line"] = without_name_line;
  stats["mentions_found"] = found;
  stats["mentions_skipped"] = mentions_skipped;
  stats["contexts_cut"] = contexts_cut;  // of the mentions found, before duplicates and caps
  stats["dropped"] = dropped;
  stats["names_dropped"] = names_dropped;

  std::map<std::string, std::map<char, std::size_t>> train_answers;  // name → answer → count
  for (const char* split : kSplitNames) {
    AtomicFile file(out_dir / (std::string(split) + ".jsonl"));
    std::map<std::string, std::size_t> answers, with_target;
    std::set<std::string> names;
    std::size_t examples = 0, context_is_source = 0;
    for (const Candidate& c : candidates) {
      if (c.split != split) continue;
      const nlohmann::ordered_json line = record(c, senses, targets);
      file.stream() << line.dump() << '\n';
      ++examples;
      ++answers[std::string(1, c.digit)];
      names.insert(c.name);
      if (c.context == c.source) ++context_is_source;
      for (const auto& [language, text] : line["targets"].items()) ++with_target[language];
      if (std::string(split) == "train") ++train_answers[c.name][c.digit];
    }
    file.commit();
    nlohmann::json& s = stats["splits"][split];
    s["examples"] = examples;
    s["names"] = names.size();
    s["answers"] = answers;
    s["with_target"] = with_target;
    s["context_is_source"] = context_is_source;  // one-sentence paragraphs: no extra context
  }

  // Two trivial baselines on test: the most frequent answer, and each name's most frequent
  // answer in train (ties to the lower section).
  std::size_t test_examples = 0, majority = 0, name_majority = 0;
  std::string majority_answer;
  for (const auto& [answer, n] : stats["splits"]["test"]["answers"].items()) {
    const std::size_t count = n.get<std::size_t>();
    test_examples += count;
    if (count > majority) majority = count, majority_answer = answer;
  }
  for (const Candidate& c : candidates) {
    if (c.split != "test") continue;
    const auto& counts = train_answers[c.name];
    const auto best = std::max_element(counts.begin(), counts.end(),
                                       [](const auto& a, const auto& b) { return a.second < b.second; });
    if (best != counts.end() && best->first == c.digit) ++name_majority;
  }
  stats["test_majority_answer"] = majority_answer;
  stats["test_majority_share"] = test_examples ? static_cast<double>(majority) / test_examples : 0.0;
  stats["test_name_majority_accuracy"] = test_examples ? static_cast<double>(name_majority) / test_examples : 0.0;
  write_file_atomic(out_dir / "stats.json", stats.dump(2) + "\n");
  return stats;
}

}  // namespace strata
