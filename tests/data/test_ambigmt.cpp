// The AmbigMT loader on hand-made fixtures in the released files' layouts
// (tests/fixtures/ambigmt/), their repairs, and errors that name file, line and field.
#include "strata/data/ambigmt.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "strata/core/error.h"
#include "strata/eval/formality.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(STRATA_FIXTURES_DIR) / "ambigmt";

// Whether `text` contains `part`, showing both when it does not.
::testing::AssertionResult contains(const std::string& text, std::string_view part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

bool has_note(const AmbigMtFile& file, std::string_view text) {
  for (const std::string& note : file.notes)
    if (note.find(text) != std::string::npos) return true;
  return false;
}

TEST(AmbigMt, FormalityRowsHaveFiveCellsUnderAFourColumnHeader) {
  const AmbigMtFile file = read_ambigmt_tsv(kFixtures / "formality_en_es.tsv");
  EXPECT_EQ(file.type, AmbiguityType::kFormality);
  EXPECT_EQ(file.language, "es");
  ASSERT_EQ(file.samples.size(), 4u);
  const AmbigMtSample& first = file.samples[0];
  EXPECT_EQ(first.id, "formality_en_es-2");
  EXPECT_EQ(first.line, 2u);
  EXPECT_EQ(first.label, "neutral");
  EXPECT_EQ(first.context, "The storm kept us inside. - We played cards all night. - Nobody won.");
  EXPECT_EQ(first.source, "When you lose, you learn.");
  EXPECT_EQ(first.reference, "Cuando uno pierde, aprende.");
  EXPECT_TRUE(first.repairs.empty());
  EXPECT_EQ(file.samples[3].label, "informal");
  EXPECT_EQ(file.samples[3].line, 5u);
  EXPECT_TRUE(has_note(file, "header names 4 columns but rows have 5"));
}

// The released labels do not follow C.1.6's AND rules everywhere: "Una llamada para usted"
// is labelled formal but has no "su", so the rules call it neutral (3 of 4 agree).
TEST(AmbigMt, ReleasedFormalityLabelsAgainstTheThesisRules) {
  const AmbigMtFile file = read_ambigmt_tsv(kFixtures / "formality_en_es.tsv");
  std::vector<std::string> references;
  std::vector<Formality> labels;
  for (const AmbigMtSample& s : file.samples) {
    references.push_back(s.reference);
    labels.push_back(parse_formality(*s.label));
  }
  EXPECT_DOUBLE_EQ(formality_accuracy(FormalityLanguage::kSpanish, references, labels), 0.75);
  EXPECT_EQ(classify_formality(FormalityLanguage::kSpanish, file.samples[2].reference), Formality::kNeutral);
}

TEST(AmbigMt, FrenchMojibakeIsRepairedAndReported) {
  const AmbigMtFile file = read_ambigmt_tsv(kFixtures / "formality_en_fr.tsv");
  ASSERT_EQ(file.samples.size(), 3u);
  const AmbigMtSample& s = file.samples[2];
  EXPECT_EQ(s.reference, "Comment tu écris ton nom ?");
  ASSERT_EQ(s.repairs.size(), 1u);
  EXPECT_TRUE(contains(s.repairs[0], "trg: cp1251 mojibake repaired in 1 word(s), first 'йcris' -> 'écris'"));
  EXPECT_TRUE(has_note(file, "1 cell(s) with cp1251 mojibake repaired"));

  const AmbigMtFile poly = read_ambigmt_tsv(kFixtures / "polysemy_en_fr.tsv");
  EXPECT_EQ(poly.samples[0].context, "Déjà in 2001 the advance was clear.");
  EXPECT_EQ(poly.samples[1].context, "\"The act was signed\"");  // quotes of the text stay
  EXPECT_TRUE(poly.samples[1].repairs.empty());
}

TEST(AmbigMt, GermanFormality) {
  const AmbigMtFile file = read_ambigmt_tsv(kFixtures / "formality_en_de.tsv");
  ASSERT_EQ(file.samples.size(), 3u);
  EXPECT_EQ(file.language, "de");
  EXPECT_EQ(file.samples[2].reference, "Bleibt ihr hier!");
  EXPECT_EQ(file.samples[2].label, "informal");
}

TEST(AmbigMt, ItResolutionLabelsOnlyInSpanish) {
  const AmbigMtFile es = read_ambigmt_tsv(kFixtures / "it_resolution_en_es.tsv");
  EXPECT_EQ(es.type, AmbiguityType::kItResolution);
  ASSERT_EQ(es.samples.size(), 2u);
  EXPECT_EQ(es.samples[0].source, "I left it on the table.");
  EXPECT_EQ(es.samples[0].reference, "La dejé en la mesa.");
  EXPECT_EQ(es.samples[0].context, "Where is the key? - Did you see it? - I need it now.");
  EXPECT_EQ(es.samples[0].label, "feminine");
  EXPECT_EQ(es.samples[1].label, "masculine");
  EXPECT_TRUE(es.notes.empty());

  const AmbigMtFile fr = read_ambigmt_tsv(kFixtures / "it_resolution_en_fr.tsv");
  ASSERT_EQ(fr.samples.size(), 2u);
  EXPECT_FALSE(fr.samples[0].label.has_value());
  EXPECT_TRUE(has_note(fr, "2 of 2 samples have no gender label"));
}

TEST(AmbigMt, NamesAndProfessionsHaveNoLabels) {
  const AmbigMtFile names = read_ambigmt_tsv(kFixtures / "gender_neutral_names_en_es.tsv");
  EXPECT_EQ(names.type, AmbiguityType::kNeutralNames);
  ASSERT_EQ(names.samples.size(), 1u);
  EXPECT_EQ(names.samples[0].source, "Riley said [pr] would call tomorrow.");
  EXPECT_EQ(names.samples[0].reference, "Riley dijo que llamaría mañana.");
  EXPECT_EQ(names.samples[0].context, "She never did. - we waited all day. - her phone was off.");
  EXPECT_FALSE(names.samples[0].label.has_value());
  EXPECT_TRUE(has_note(names, "the context follows the source"));

  const AmbigMtFile prof = read_ambigmt_tsv(kFixtures / "neutral_professions_en_de.tsv");
  EXPECT_EQ(prof.type, AmbiguityType::kNeutralProfessions);
  ASSERT_EQ(prof.samples.size(), 1u);
  EXPECT_EQ(prof.samples[0].context, "Ada Brook was born in 1950 in Leeds. She studied law in London.");
  EXPECT_EQ(prof.samples[0].source, "[pr] later worked as a judge in York.");
  EXPECT_EQ(prof.samples[0].reference, "Sie arbeitete später als Richterin in York.");
  EXPECT_FALSE(prof.samples[0].label.has_value());
}

TEST(AmbigMt, PolysemySpreadsheetArtefacts) {
  const AmbigMtFile file = read_ambigmt_tsv(kFixtures / "polysemy_en_es.tsv");
  EXPECT_EQ(file.type, AmbiguityType::kPolysemy);
  ASSERT_EQ(file.samples.size(), 4u);
  const AmbigMtSample& boolean = file.samples[0];
  EXPECT_EQ(boolean.source, "true");
  EXPECT_EQ(boolean.reference, "verdadero");
  ASSERT_EQ(boolean.repairs.size(), 1u);
  EXPECT_TRUE(contains(boolean.repairs[0], "spreadsheet boolean TRUE read back as 'true'"));

  EXPECT_EQ(file.samples[1].source, "about");
  EXPECT_EQ(file.samples[1].reference, "cerca de");
  EXPECT_TRUE(file.samples[1].repairs.empty());

  EXPECT_EQ(file.samples[2].context, "Write your \"home\" address below.");
  ASSERT_EQ(file.samples[2].repairs.size(), 1u);
  EXPECT_TRUE(contains(file.samples[2].repairs[0], "src_ctx: CSV quoting removed"));

  EXPECT_EQ(file.samples[3].context, "Its aim is simple; it\xEF\xBF\xBDs clear.");  // kept, reported
  ASSERT_EQ(file.samples[3].repairs.size(), 1u);
  EXPECT_TRUE(contains(file.samples[3].repairs[0], "src_ctx: holds U+FFFD"));

  EXPECT_TRUE(has_note(file, "1 spreadsheet boolean(s) read back as words"));
  EXPECT_TRUE(has_note(file, "1 cell(s) with CSV quoting removed"));
  EXPECT_TRUE(has_note(file, "1 cell(s) with characters lost before release"));
}

class AmbigMtErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("strata_ambigmt_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return dir_ / name;
  }
  // The message of the strata::Error reading `file` throws ("" when it does not throw).
  static std::string error_of(const fs::path& file) {
    try {
      read_ambigmt_tsv(file);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

constexpr std::string_view kFormalityHeader = "formality\tsrc\tsrc_ctx\ttrg\n";

TEST_F(AmbigMtErrors, NameFileLineAndField) {
  const fs::path short_row = write("formality_en_es.tsv", std::string(kFormalityHeader) + "formal\t \tctx\tsrc\n");
  EXPECT_TRUE(contains(error_of(short_row), "formality_en_es.tsv:2: field 'trg': the row has 4 tab-separated cells"));

  const fs::path filled_blank =
      write("formality_en_fr.tsv", std::string(kFormalityHeader) + "neutral\t \tc\ts\tt\nformal\tx\tc\ts\tt\n");
  EXPECT_TRUE(contains(error_of(filled_blank), ":3: field '(blank 2nd cell)': expected blank, found 'x'"));

  const fs::path label = write("formality_en_de.tsv", std::string(kFormalityHeader) + "polite\t \tc\ts\tt\n");
  EXPECT_TRUE(contains(error_of(label), ":2: field 'formality': unknown label 'polite'"));

  const fs::path gender = write("it.tsv", "src\ttrg\tsrc_ctx\tgender\ns\tt\tc\tneuter\n");
  EXPECT_TRUE(contains(error_of(gender), "it.tsv:2: field 'gender': unknown label 'neuter'"));

  const fs::path extra = write("polysemy_en_es.tsv", "src_word\ttrg_word\tsrc_ctx\nw\tt\tc\tmore\n");
  EXPECT_TRUE(contains(error_of(extra), ":2: field '(extra cell)': the row has 4 tab-separated cells; a polysemy row has 3"));

  const fs::path header = write("other.tsv", "a\tb\n");
  EXPECT_TRUE(contains(error_of(header), "other.tsv:1: not an AmbigMT header: 'a\tb'"));

  EXPECT_THROW(read_ambigmt_tsv(dir_ / "missing.tsv"), Error);
}

TEST_F(AmbigMtErrors, CrlfBlankLinesAndInvalidUtf8) {
  const fs::path file = write("polysemy_en_de.tsv", "src_word\ttrg_word\tsrc_ctx\r\n\r\nbank\tBank\tThe bank \xFF closed.\r\n");
  const AmbigMtFile read = read_ambigmt_tsv(file);
  EXPECT_EQ(read.language, "de");
  ASSERT_EQ(read.samples.size(), 1u);
  EXPECT_EQ(read.samples[0].line, 3u);
  EXPECT_EQ(read.samples[0].context, "The bank \xEF\xBF\xBD closed.");
  ASSERT_EQ(read.samples[0].repairs.size(), 1u);
  EXPECT_TRUE(contains(read.samples[0].repairs[0], "src_ctx: 1 invalid UTF-8 byte(s) replaced"));
  EXPECT_EQ(read_ambigmt_tsv(write("x.tsv", "src\ttrg\tsrc_ctx\n")).language, "");
}

}  // namespace
}  // namespace strata
