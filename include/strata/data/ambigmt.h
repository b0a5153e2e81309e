#pragma once
// The AmbigMT TSV files as released in jpilaul/interactive_chain_prompting (thesis ch. 4,
// App. C.1.4-C.1.6): AmbigMT/<kind>/<kind>_en_<es|fr|de>.tsv. The file's header tells its kind:
//   formality            "formality src src_ctx trg", but every row has FIVE cells:
//                        label, a blank cell, context, source, target. The header's order is
//                        wrong as well as short: the third cell is the multi-sentence context
//                        and the fourth the "you" sentence. Labels: formal, informal and a
//                        third class, neutral, that the thesis does not have.
//   it_resolution        "src trg src_ctx gender"; gender is masculine / feminine in the es
//                        file only: fr and de leave it blank (no label).
//   gender_neutral_names "src trg src_ctx": no label column; "[pr]" stands for the pronouns
//                        removed from the source, and the context FOLLOWS the source.
//   neutral_professions  "src_ctx src trg": no label column (en-es and en-de only).
//   polysemy             "src_word trg_word src_ctx": the source is one English word, the
//                        reference its translation in that context, and the context a
//                        sentence containing the word (UN / EU text, not subtitles).
// There is no Japanese file, although the thesis has en-ja.
//
// Known damage, repaired and reported in each sample's `repairs` (and counted in the file's
// `notes`), the text otherwise kept as released:
//   - a spreadsheet turned the polysemy word "true" into the boolean TRUE (FALSE likewise):
//     read back as "true" / "false";
//   - cells written with CSV quoting ("... ""White and Green"" ..."): the outer quotes are
//     removed and doubled quotes halved, only when every inner quote is doubled, so that a
//     quoted subtitle line ("When you know he's coming.") stays as it is;
//   - French mojibake: Latin-1 text decoded as cp1251 ("йcrit" for "écrit"); a word that
//     mixes Latin and Cyrillic letters gets its Cyrillic letters mapped back (а..я -> à..ÿ);
//   - invalid UTF-8 bytes become U+FFFD. Characters lost before release (a U+FFFD already in
//     the file, as in "It<U+FFFD>s") cannot be recovered and are only reported.
// Rows with the wrong number of cells, an unknown label or a non-blank blank cell are a
// strata::Error naming the file, line and field.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

enum class AmbiguityType { kFormality, kItResolution, kNeutralNames, kNeutralProfessions, kPolysemy };

// "formality", "it_resolution", "gender_neutral_names", "neutral_professions", "polysemy".
std::string_view ambiguity_type_name(AmbiguityType type);

struct AmbigMtSample {
  std::string id;    // "<file stem>-<line>", e.g. "formality_en_es-2"
  std::size_t line = 0;  // 1-based line of the file (the header is line 1)
  AmbiguityType type = AmbiguityType::kFormality;
  std::string source;     // the English sentence (polysemy: the English word)
  std::string context;
  std::string reference;  // the reference translation (polysemy: the word's translation)
  std::optional<std::string> label;  // formality: formal/informal/neutral; it: masculine/feminine
  std::vector<std::string> repairs;  // what the loader changed or found damaged, one line each
};

struct AmbigMtFile {
  AmbiguityType type = AmbiguityType::kFormality;
  std::string language;  // the target language of "<kind>_en_<xx>.tsv"; empty for other names
  std::vector<AmbigMtSample> samples;
  std::vector<std::string> notes;  // the file's quirks: layout, missing labels, repair counts
};

AmbigMtFile read_ambigmt_tsv(const std::filesystem::path& file);

}  // namespace strata
