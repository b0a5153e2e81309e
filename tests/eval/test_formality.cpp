// The C.1.6 formality rules on hand-tagged words (the rules exactly), the lexical tagger on
// plain text, case and word boundaries, and F-Acc.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/core/error.h"
#include "strata/eval/formality.h"

namespace strata {
namespace {

constexpr auto es = FormalityLanguage::kSpanish;
constexpr auto fr = FormalityLanguage::kFrench;
constexpr auto de = FormalityLanguage::kGerman;

TaggedWord verb(std::string w) { return {std::move(w), true, false, false}; }
TaggedWord pron(std::string w) { return {std::move(w), false, true, false}; }
TaggedWord det(std::string w) { return {std::move(w), false, false, true}; }
TaggedWord other(std::string w) { return {std::move(w), false, false, false}; }

Formality tagged(FormalityLanguage language, const std::vector<TaggedWord>& words, bool exclamation = false) {
  return classify_formality(language, words, exclamation);
}

// es: formal needs the pronoun usted AND the determiner su.
TEST(FormalityRulesEs, FormalNeedsUstedAndSu) {
  EXPECT_EQ(tagged(es, {verb("Es"), other("este"), det("su"), other("abrigo"), pron("usted")}), Formality::kFormal);
  EXPECT_EQ(tagged(es, {other("Una"), other("llamada"), other("para"), pron("usted")}), Formality::kNeutral);
  EXPECT_EQ(tagged(es, {det("Su"), other("hijo")}), Formality::kNeutral);
}

// es: informal needs every verb to end in s / ste / os, an informal pronoun and an informal
// determiner.
TEST(FormalityRulesEs, InformalNeedsAllThreeAndEveryVerb) {
  EXPECT_EQ(tagged(es, {pron("Tú"), verb("tienes"), det("tu"), other("llave")}), Formality::kInformal);
  EXPECT_EQ(tagged(es, {pron("tú"), verb("dijiste"), det("tu"), other("nombre")}), Formality::kInformal);
  // One verb without an informal ending spoils "all verbs".
  EXPECT_EQ(tagged(es, {pron("tú"), verb("tienes"), verb("quiero"), det("tu"), other("llave")}), Formality::kNeutral);
  // No verb at all is no verb evidence.
  EXPECT_EQ(tagged(es, {pron("tú"), det("tu"), other("llave")}), Formality::kNeutral);
  // The words must carry the class the rule names: "tu" tagged only as a pronoun is no determiner.
  EXPECT_EQ(tagged(es, {pron("tu"), verb("tienes"), other("llave")}), Formality::kNeutral);
}

TEST(FormalityRulesEs, BothFormalAndInformalIsNeutral) {
  const std::vector<TaggedWord> words{pron("usted"), det("su"), pron("tú"), verb("tienes"), det("tu")};
  const FormalityEvidence e = formality_evidence(es, words, false);
  EXPECT_TRUE(e.formal);
  EXPECT_TRUE(e.informal);
  EXPECT_EQ(tagged(es, words), Formality::kNeutral);
}

TEST(FormalityRulesFr, FormalNeedsEzVerbVousAndVotre) {
  const std::vector<TaggedWord> words{verb("Avez"), pron("vous"), det("votre"), other("billet")};
  const FormalityEvidence e = formality_evidence(fr, words, false);
  EXPECT_TRUE(e.verb_formal && e.pronoun_formal && e.determiner_formal);
  EXPECT_EQ(tagged(fr, words), Formality::kFormal);
  EXPECT_EQ(tagged(fr, {other("Je"), pron("vous"), verb("aime")}), Formality::kNeutral);
  EXPECT_EQ(tagged(fr, {pron("vous"), verb("avez"), other("raison")}), Formality::kNeutral);
}

TEST(FormalityRulesFr, InformalNeedsSxOrOnsVerbTuAndTonTaTesToi) {
  EXPECT_EQ(tagged(fr, {pron("Tu"), verb("as"), det("ton"), other("livre")}), Formality::kInformal);
  EXPECT_EQ(tagged(fr, {pron("tu"), verb("veux"), det("ta"), other("part")}), Formality::kInformal);
  EXPECT_EQ(tagged(fr, {pron("tu"), verb("vas"), other("la"), verb("tuer")}), Formality::kNeutral);  // no determiner
}

// de: Sie/Ihr* formal unless the sentence has "!"; du/dein*/dich informal; with "!" also
// er/sie/es/ihr (lower case). Case is compared as written.
TEST(FormalityRulesDe, PronounsAndTheExclamationRule) {
  EXPECT_EQ(tagged(de, {verb("Brauchen"), pron("Sie"), pron("Ihren"), other("Mantel")}), Formality::kFormal);
  EXPECT_EQ(tagged(de, {pron("Du"), verb("hast"), other("Zeit")}), Formality::kNeutral);  // "Du" is not "du"
  EXPECT_EQ(tagged(de, {verb("hast"), pron("du"), pron("deine"), other("Tasche")}), Formality::kInformal);
  EXPECT_EQ(tagged(de, {pron("Sie"), verb("kommen")}, true), Formality::kNeutral);  // "!" blocks formal
  EXPECT_EQ(tagged(de, {verb("Kommt"), pron("sie"), other("mit")}, true), Formality::kInformal);
  EXPECT_EQ(tagged(de, {verb("Kommt"), pron("sie"), other("mit")}, false), Formality::kNeutral);
  EXPECT_EQ(tagged(de, {pron("Sie"), pron("du")}), Formality::kNeutral);  // both
}

TEST(FormalityWords, LettersOnlyUnicodeAware) {
  EXPECT_EQ(formality_words("¿T'as-tu vu l'Ñandú?"), (std::vector<std::string>{"T", "as", "tu", "vu", "l", "Ñandú"}));
  EXPECT_EQ(formality_words("  "), std::vector<std::string>{});
  EXPECT_EQ(formality_words("a1b"), (std::vector<std::string>{"a", "b"}));
}

TEST(FormalityTagger, ListsAndVerbSlots) {
  const auto words = tag_formality_words(es, "¿Tú tienes tu llave?");
  ASSERT_EQ(words.size(), 4u);
  EXPECT_TRUE(words[0].pronoun);
  EXPECT_TRUE(words[1].verb);
  EXPECT_TRUE(words[2].pronoun && words[2].determiner);  // "tu" is in both es lists
  EXPECT_FALSE(words[3].verb);
  // The verb after clitics: "te lo" are skipped to "das".
  EXPECT_TRUE(tag_formality_words(es, "Yo te lo das")[3].verb);
  // French inversion, through "-t-".
  const auto inverted = tag_formality_words(fr, "Va-t-il venir ?");
  EXPECT_TRUE(inverted[0].verb);
  EXPECT_FALSE(inverted[3].verb);
  // German needs no verbs.
  for (const TaggedWord& w : tag_formality_words(de, "Haben Sie Zeit?")) EXPECT_FALSE(w.verb);
}

TEST(FormalityPlainText, Spanish) {
  EXPECT_EQ(classify_formality(es, "¿Es este su abrigo, usted?"), Formality::kFormal);
  EXPECT_EQ(classify_formality(es, "¿USTED tiene SU llave?"), Formality::kFormal);  // case-insensitive
  EXPECT_EQ(classify_formality(es, "¿Tú tienes tu llave?"), Formality::kInformal);
  EXPECT_EQ(classify_formality(es, "¡TÚ TIENES TU LLAVE!"), Formality::kInformal);
  EXPECT_EQ(classify_formality(es, "¿Tu\u0301 tienes tu llave?"), Formality::kInformal);  // decomposed ú
  // Accents count: "tù" is in neither list (nor a subject the tagger knows).
  EXPECT_EQ(classify_formality(es, "¿tù tienes tù llave?"), Formality::kNeutral);
  // The subject is dropped, so the tagger finds no verb: not informal to it.
  EXPECT_EQ(classify_formality(es, "¿Tienes tu llave?"), Formality::kNeutral);
  EXPECT_EQ(classify_formality(es, "Cuando uno pierde, aprende."), Formality::kNeutral);
}

TEST(FormalityPlainText, French) {
  EXPECT_EQ(classify_formality(fr, "Avez-vous votre billet ?"), Formality::kFormal);
  EXPECT_EQ(classify_formality(fr, "Vous ne l'avez pas dans votre sac ?"), Formality::kFormal);
  EXPECT_EQ(classify_formality(fr, "VOUS AVEZ VOTRE BILLET"), Formality::kFormal);
  EXPECT_EQ(classify_formality(fr, "Comment tu écris ton nom ?"), Formality::kInformal);
  EXPECT_EQ(classify_formality(fr, "As-tu ta clé ?"), Formality::kInformal);
  EXPECT_EQ(classify_formality(fr, "On ne sait jamais."), Formality::kNeutral);
  // A word merely containing a list word does not count ("voustiti", "tonton").
  EXPECT_EQ(classify_formality(fr, "Voustiti avez tonton"), Formality::kNeutral);
}

TEST(FormalityPlainText, German) {
  EXPECT_EQ(classify_formality(de, "Brauchen Sie Ihren Mantel?"), Formality::kFormal);
  EXPECT_EQ(classify_formality(de, "Sie ist nett."), Formality::kFormal);  // sentence-initial Sie: the rule as written
  EXPECT_EQ(classify_formality(de, "Sie ist nett!"), Formality::kNeutral);
  EXPECT_EQ(classify_formality(de, "Du hast deine Tasche vergessen."), Formality::kInformal);
  EXPECT_EQ(classify_formality(de, "Bleibt ihr hier!"), Formality::kInformal);
  EXPECT_EQ(classify_formality(de, "Kennen sie ihn?"), Formality::kNeutral);
  EXPECT_EQ(classify_formality(de, "Um Mord zu beweisen, muss man Vorsatz beweisen."), Formality::kNeutral);
}

// F-Acc = 2 of 3: the last prediction has "!" so its "Sie" is not formal.
TEST(FormalityAccuracy, FractionOfMatchingClasses) {
  EXPECT_DOUBLE_EQ(formality_accuracy(de, {"Haben Sie Zeit?", "Hast du Zeit?", "Sie sind spät!"},
                                      {Formality::kFormal, Formality::kInformal, Formality::kFormal}),
                   2.0 / 3.0);
  EXPECT_DOUBLE_EQ(formality_accuracy(fr, {"On y va."}, {Formality::kNeutral}), 1.0);
  EXPECT_THROW(formality_accuracy(de, {"a"}, {}), Error);
  EXPECT_THROW(formality_accuracy(de, {}, {}), Error);
}

TEST(FormalityNames, ParseAndName) {
  EXPECT_EQ(parse_formality("informal"), Formality::kInformal);
  EXPECT_EQ(formality_name(Formality::kNeutral), "neutral");
  EXPECT_EQ(parse_formality_language("fr"), FormalityLanguage::kFrench);
  EXPECT_THROW(parse_formality("polite"), Error);
  EXPECT_THROW(parse_formality_language("ja"), Error);
}

}  // namespace
}  // namespace strata
