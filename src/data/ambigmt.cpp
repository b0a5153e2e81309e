// Reads the released AmbigMT TSV files (thesis ch. 4), one layout per ambiguity kind, with
// the repairs and checks ambigmt.h describes.
#include "strata/data/ambigmt.h"

#include <fmt/format.h>

#include <array>
#include <map>
#include <optional>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/strings.h"
#include "strata/core/utf8.h"

namespace strata {

namespace {

constexpr int kNone = -1;

// Where a kind's fields sit in its rows, and what each cell is called in messages.
struct RowLayout {
  AmbiguityType type;
  std::string_view header;
  std::vector<std::string_view> cells;
  int source, context, reference, label;
  std::string_view note;
};

const std::vector<RowLayout>& layouts() {
  static const std::vector<RowLayout> all{
      {AmbiguityType::kFormality, "formality\tsrc\tsrc_ctx\ttrg",
       {"formality", "(blank 2nd cell)", "src_ctx", "src", "trg"}, 3, 2, 4, 0,
       "the header names 4 columns but rows have 5: read as formality, (blank), src_ctx, src, trg"},
      {AmbiguityType::kItResolution, "src\ttrg\tsrc_ctx\tgender", {"src", "trg", "src_ctx", "gender"}, 0, 2, 1, 3,
       ""},
      {AmbiguityType::kNeutralNames, "src\ttrg\tsrc_ctx", {"src", "trg", "src_ctx"}, 0, 2, 1, kNone,
       "no label column; the context follows the source"},
      {AmbiguityType::kNeutralProfessions, "src_ctx\tsrc\ttrg", {"src_ctx", "src", "trg"}, 1, 0, 2, kNone,
       "no label column"},
      {AmbiguityType::kPolysemy, "src_word\ttrg_word\tsrc_ctx", {"src_word", "trg_word", "src_ctx"}, 0, 2, 1,
       kNone, "the source is the English word, the reference its translation"},
  };
  return all;
}

// The repairs, counted per file for its notes.
enum class Repair { kInvalidUtf8, kSpreadsheetBoolean, kCsvQuoting, kMojibake, kLostCharacter };

// Each summary takes the count.
constexpr std::array<std::string_view, 5> kRepairSummary{
    "{} cell(s) with invalid UTF-8, replaced by U+FFFD", "{} spreadsheet boolean(s) read back as words",
    "{} cell(s) with CSV quoting removed", "{} cell(s) with cp1251 mojibake repaired",
    "{} cell(s) with characters lost before release (U+FFFD)"};

struct Repairs {
  std::vector<std::string>& lines;
  std::map<Repair, std::size_t>& counts;
  void add(Repair kind, std::string text) {
    lines.push_back(std::move(text));
    ++counts[kind];
  }
};

// The cell without CSV quoting, when it has it: wrapped in quotes, every inner quote doubled,
// at least one doubled. Otherwise nothing (quotes that belong to the text stay).
std::optional<std::string> csv_unquoted(std::string_view cell) {
  if (cell.size() < 2 || cell.front() != '"' || cell.back() != '"') return std::nullopt;
  const std::string_view inner = cell.substr(1, cell.size() - 2);
  std::string out;
  bool doubled = false;
  for (std::size_t i = 0; i < inner.size(); ++i) {
    if (inner[i] != '"') {
      out.push_back(inner[i]);
    } else if (i + 1 < inner.size() && inner[i + 1] == '"') {
      out.push_back('"');
      doubled = true;
      ++i;
    } else {
      return std::nullopt;
    }
  }
  if (!doubled) return std::nullopt;
  return out;
}

bool is_latin_letter(char32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= 0xC0 && c <= 0x24F && c != 0xD7 && c != 0xF7);
}

// А..я, where cp1251 puts the bytes 0xC0..0xFF that Latin-1 reads as À..ÿ.
bool is_cyrillic_letter(char32_t c) { return c >= 0x410 && c <= 0x44F; }

struct MojibakeRepair {
  std::string text;  // the repaired text
  std::size_t words = 0;
  std::string first_before, first_after;  // the first word repaired, for the message
};

// Each word (a run of Latin and Cyrillic letters) that mixes the two scripts gets its
// Cyrillic letters mapped back to Latin-1 (words == 0: nothing to repair).
MojibakeRepair repair_mojibake(std::string_view text) {
  std::vector<char32_t> cps;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_sequence_length(text, i);  // valid: the cell was sanitised
    cps.push_back(utf8_decode_at(text, i, length));
    i += length;
  }
  MojibakeRepair repair;
  for (std::size_t start = 0; start < cps.size();) {
    std::size_t end = start;
    bool latin = false, cyrillic = false;
    while (end < cps.size() && (is_latin_letter(cps[end]) || is_cyrillic_letter(cps[end]))) {
      latin |= is_latin_letter(cps[end]);
      cyrillic |= is_cyrillic_letter(cps[end]);
      ++end;
    }
    if (latin && cyrillic) {
      std::string before, after;
      for (std::size_t k = start; k < end; ++k) {
        utf8_append(before, cps[k]);
        if (is_cyrillic_letter(cps[k])) cps[k] = cps[k] - 0x410 + 0xC0;
        utf8_append(after, cps[k]);
      }
      if (repair.words++ == 0) {
        repair.first_before = std::move(before);
        repair.first_after = std::move(after);
      }
    }
    start = end == start ? start + 1 : end;
  }
  for (const char32_t c : cps) utf8_append(repair.text, c);
  return repair;
}

std::string clean_cell(std::string_view cell, std::string_view field, Repairs& repairs) {
  if (cell.find("\xEF\xBF\xBD") != std::string_view::npos)
    repairs.add(Repair::kLostCharacter, fmt::format("{}: holds U+FFFD, a character lost before release", field));
  std::size_t replaced = 0;
  std::string text = sanitize_utf8(cell, &replaced);
  if (replaced > 0)
    repairs.add(Repair::kInvalidUtf8, fmt::format("{}: {} invalid UTF-8 byte(s) replaced by U+FFFD", field, replaced));
  if (auto unquoted = csv_unquoted(text)) {
    text = std::move(*unquoted);
    repairs.add(Repair::kCsvQuoting, fmt::format("{}: CSV quoting removed", field));
  }
  if (MojibakeRepair repaired = repair_mojibake(text); repaired.words > 0) {
    repairs.add(Repair::kMojibake, fmt::format("{}: cp1251 mojibake repaired in {} word(s), first '{}' -> '{}'", field,
                                               repaired.words, repaired.first_before, repaired.first_after));
    text = std::move(repaired.text);
  }
  return text;
}

std::string language_of(const std::filesystem::path& file) {
  const std::string stem = file.stem().string();
  const std::size_t at = stem.rfind("_en_");
  return at != std::string::npos && stem.size() == at + 6 ? stem.substr(at + 4) : "";
}

}  // namespace

std::string_view ambiguity_type_name(AmbiguityType type) {
  switch (type) {
    case AmbiguityType::kFormality: return "formality";
    case AmbiguityType::kItResolution: return "it_resolution";
    case AmbiguityType::kNeutralNames: return "gender_neutral_names";
    case AmbiguityType::kNeutralProfessions: return "neutral_professions";
    case AmbiguityType::kPolysemy: return "polysemy";
  }
  return "";
}

AmbigMtFile read_ambigmt_tsv(const std::filesystem::path& file) {
  const std::string text = read_file(file);
  const std::vector<std::string_view> lines = split_lines(text);
  const std::string_view header = lines.empty() ? std::string_view{} : lines[0];
  const RowLayout* layout = nullptr;
  for (const RowLayout& l : layouts())
    if (l.header == header) layout = &l;
  if (!layout)
    throw error_at(file, 1, "", fmt::format("not an AmbigMT header: '{}' (a formality, it_resolution, "
                                            "gender_neutral_names, neutral_professions or polysemy file)",
                                            header));

  AmbigMtFile out;
  out.type = layout->type;
  out.language = language_of(file);
  const std::string stem = file.stem().string();
  std::map<Repair, std::size_t> counts;
  for (std::size_t n = 1; n < lines.size(); ++n) {
    if (lines[n].empty()) continue;
    const std::size_t line = n + 1;
    AmbigMtSample sample;
    sample.id = fmt::format("{}-{}", stem, line);
    sample.line = line;
    sample.type = layout->type;
    Repairs repairs{sample.repairs, counts};

    const std::vector<std::string_view> cells = split(lines[n], '\t');
    if (cells.size() != layout->cells.size()) {
      const std::string_view field =
          cells.size() < layout->cells.size() ? layout->cells[cells.size()] : std::string_view("(extra cell)");
      std::string names;
      for (const std::string_view name : layout->cells) names += (names.empty() ? "" : ", ") + std::string(name);
      throw error_at(file, line, field,
                     fmt::format("the row has {} tab-separated cells; a {} row has {} ({})", cells.size(),
                                 ambiguity_type_name(layout->type), layout->cells.size(), names));
    }
    if (layout->type == AmbiguityType::kFormality && !trim(cells[1]).empty())
      throw error_at(file, line, layout->cells[1], fmt::format("expected blank, found '{}'", cells[1]));

    const auto cell = [&](int index) { return clean_cell(cells[index], layout->cells[index], repairs); };
    sample.source = cell(layout->source);
    sample.context = cell(layout->context);
    sample.reference = cell(layout->reference);
    if (layout->type == AmbiguityType::kPolysemy && (sample.source == "TRUE" || sample.source == "FALSE")) {
      const std::string word = sample.source == "TRUE" ? "true" : "false";
      repairs.add(Repair::kSpreadsheetBoolean,
                  fmt::format("src_word: spreadsheet boolean {} read back as '{}'", sample.source, word));
      sample.source = word;
    }
    if (layout->label != kNone) {
      const std::string_view label = trim(cells[layout->label]);
      const std::string_view field = layout->cells[layout->label];
      if (layout->type == AmbiguityType::kFormality) {
        if (label != "formal" && label != "informal" && label != "neutral")
          throw error_at(file, line, field, fmt::format("unknown label '{}' (formal, informal, neutral)", label));
        sample.label = std::string(label);
      } else if (!label.empty()) {
        if (label != "masculine" && label != "feminine")
          throw error_at(file, line, field, fmt::format("unknown label '{}' (masculine, feminine or blank)", label));
        sample.label = std::string(label);
      }
    }
    out.samples.push_back(std::move(sample));
  }

  if (!layout->note.empty()) out.notes.emplace_back(layout->note);
  if (layout->type == AmbiguityType::kItResolution) {
    std::size_t unlabelled = 0;
    for (const AmbigMtSample& s : out.samples) unlabelled += !s.label;
    if (unlabelled > 0)
      out.notes.push_back(fmt::format("{} of {} samples have no gender label (blank)", unlabelled, out.samples.size()));
  }
  for (const auto& [kind, count] : counts)
    out.notes.push_back(fmt::format(fmt::runtime(kRepairSummary[static_cast<std::size_t>(kind)]), count));
  return out;
}

}  // namespace strata
