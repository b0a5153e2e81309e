// The Porter stemmer against NLTK 3.8's PorterStemmer() (mode NLTK_EXTENSIONS).
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "strata/eval/porter_stemmer.h"

namespace strata {
namespace {

TEST(PorterStemmer, MatchesNltkOnFixture) {
  // porter_nltk.tsv: word<TAB>stem as NLTK computed it, for 3058 words.
  std::ifstream in(STRATA_FIXTURES_DIR "/eval/porter_nltk.tsv");
  ASSERT_TRUE(in) << "missing fixture tests/fixtures/eval/porter_nltk.tsv";
  std::string line;
  std::size_t checked = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::size_t tab = line.find('\t');
    ASSERT_NE(tab, std::string::npos) << line;
    const std::string word = line.substr(0, tab);
    EXPECT_EQ(porter_stem(word), line.substr(tab + 1)) << "word: " << word;
    ++checked;
  }
  EXPECT_EQ(checked, 3058u);
}

TEST(PorterStemmer, NltkExtensionsDifferFromThePaper) {
  EXPECT_EQ(porter_stem("dying"), "die");  // irregular forms
  EXPECT_EQ(porter_stem("lying"), "lie");
  EXPECT_EQ(porter_stem("skies"), "sky");
  EXPECT_EQ(porter_stem("news"), "news");
  EXPECT_EQ(porter_stem("dies"), "die");  // four-letter -ies / -ied keep "ie"
  EXPECT_EQ(porter_stem("died"), "die");
  EXPECT_EQ(porter_stem("spied"), "spi");
  EXPECT_EQ(porter_stem("fly"), "fli");  // y -> i after a consonant, even in "fly"
  EXPECT_EQ(porter_stem("flies"), "fli");
  EXPECT_EQ(porter_stem("enjoy"), "enjoy");  // ... but not after a vowel
  EXPECT_EQ(porter_stem("generously"), "gener");
  EXPECT_EQ(porter_stem("radically"), "radic");  // ALLI -> AL first, then step 2 again
  EXPECT_EQ(porter_stem("geology"), "geolog");   // LOGI -> LOG measured with the l
}

TEST(PorterStemmer, ClassicExamples) {
  EXPECT_EQ(porter_stem("running"), "run");
  EXPECT_EQ(porter_stem("caresses"), "caress");
  EXPECT_EQ(porter_stem("ponies"), "poni");
  EXPECT_EQ(porter_stem("agreed"), "agre");
  EXPECT_EQ(porter_stem("hopping"), "hop");
  EXPECT_EQ(porter_stem("filing"), "file");
  EXPECT_EQ(porter_stem("relational"), "relat");
  EXPECT_EQ(porter_stem("controll"), "control");
  EXPECT_EQ(porter_stem("adoption"), "adopt");
}

TEST(PorterStemmer, ShortWordsAndCase) {
  EXPECT_EQ(porter_stem("is"), "is");  // one or two characters: unchanged
  EXPECT_EQ(porter_stem("as"), "as");
  EXPECT_EQ(porter_stem("was"), "wa");  // three are stemmed (rouge never asks for these)
  EXPECT_EQ(porter_stem("Running"), "run");
  EXPECT_EQ(porter_stem("SKIES"), "ski");         // NLTK looks irregular forms up before lowering
  EXPECT_EQ(porter_stem("abc123ing"), "abc123");  // digits count as consonants
  EXPECT_EQ(porter_stem(""), "");
}

}  // namespace
}  // namespace strata
