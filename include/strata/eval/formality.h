#pragma once
// The rule-based formality classifier of thesis Appendix C.1.6 (how AmbigMT's formality data
// was labelled; C.1.13: the same rules give F-Acc) for Spanish, French and German.
//
// The rules, verbatim from C.1.6 (every check starts false):
//   es  verb_informal    ALL verbs end in "s", "ste" or "os"
//       pronoun_formal   a pronoun is "usted"
//       pronoun_informal a pronoun is one of tú tu te vos vosotros
//       det_formal       a determiner is "su"
//       det_informal     a determiner is one of tu vosotros vosotras
//       informal = verb_informal AND pronoun_informal AND det_informal
//       formal   = pronoun_formal AND det_formal
//   fr  verb_informal    a verb ends in "x", "s" or "ons";  verb_formal: a verb ends in "ez"
//       pronoun_formal   "vous";  pronoun_informal "tu"
//       det_formal       vos votre;  det_informal tes ton ta toi
//       informal = verb_informal AND pronoun_informal AND det_informal
//       formal   = verb_formal AND pronoun_formal AND det_formal
//   de  pronoun_formal   no "!" in the sentence and a pronoun is one of Sie Ihr Ihre Ihren
//                        Ihrem Ihrer Ihres
//       pronoun_informal a pronoun is one of du dein deine deinen deinem deiner deines dich,
//                        or "!" is in the sentence and a pronoun is one of er sie es ihr
//       informal = pronoun_informal;  formal = pronoun_formal
// A sentence is formal or informal when exactly one of the two holds, and neutral when
// neither or both do (C.1.6 drops those samples; the released data keeps them as "neutral").
// The lists are taken as printed, "tu" (es) and "toi" (fr) included where they sit.
// An "ALL verbs" test needs at least one verb (no verb is no evidence).
//
// Case: words are compared in Unicode NFC; es and fr lower-cased, so "Usted" and "TÚ" count;
// accents are kept ("tu" and "tú" are different list entries). de is compared as written,
// since case is what tells the formal Sie / Ihr from sie "she, they" / ihr "you all": a
// sentence-initial "Sie" counts as formal, as the thesis's rule does.
// Words are maximal runs of Unicode letters and combining marks; anything else (spaces,
// digits, punctuation, apostrophes, hyphens) separates them: "t'as" is t + as, "avez-vous"
// is avez + vous.
//
// Parts of speech: the thesis's checks are on verbs, pronouns and determiners, i.e. on a
// tagger's output. classify_formality(language, words, exclamation) applies the rules to
// words the caller tagged (e.g. spaCy's VERB/AUX, PRON, DET). For plain text,
// tag_formality_words is a small lexical tagger: a word is a pronoun or a determiner when it
// is in that rule's list (all closed-class words), and a verb when it is the first word after
// a subject or clitic pronoun, further clitics and "no"/"ne" skipped (es: "te quiero",
// "¿tú tienes", fr: "tu ne le sais", "vous avez"), or in French the word before a
// hyphenated subject ("avez-vous", "va-t-il"). Spanish subjects are often dropped, so a
// sentence like "¿Tienes tu libro?" has no verb it can find and is not informal to it.
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

enum class FormalityLanguage { kSpanish, kFrench, kGerman };
enum class Formality { kFormal, kInformal, kNeutral };

// "es", "fr", "de"; strata::Error naming the supported codes otherwise.
FormalityLanguage parse_formality_language(std::string_view code);
// "formal", "informal", "neutral" (AmbigMT's labels); strata::Error otherwise.
Formality parse_formality(std::string_view label);
std::string_view formality_name(Formality formality);

struct TaggedWord {
  std::string text;
  bool verb = false;
  bool pronoun = false;
  bool determiner = false;  // a word may be both (the lexical tagger's es "tu")
};

// What each check found, and the two conclusions.
struct FormalityEvidence {
  bool verb_formal = false;
  bool verb_informal = false;
  bool pronoun_formal = false;
  bool pronoun_informal = false;
  bool determiner_formal = false;
  bool determiner_informal = false;
  bool formal = false;
  bool informal = false;
};

std::vector<std::string> formality_words(std::string_view sentence);
std::vector<TaggedWord> tag_formality_words(FormalityLanguage language, std::string_view sentence);

// The C.1.6 checks on tagged words; `exclamation`: the sentence contains "!".
FormalityEvidence formality_evidence(FormalityLanguage language, std::span<const TaggedWord> words,
                                     bool exclamation);
Formality classify_formality(FormalityLanguage language, std::span<const TaggedWord> words,
                             bool exclamation);
// Plain text, tagged by tag_formality_words.
Formality classify_formality(FormalityLanguage language, std::string_view sentence);

// F-Acc: the fraction of predictions (translations) whose class equals the reference label
// of their sample. strata::Error when the sizes differ or there are none.
double formality_accuracy(FormalityLanguage language, const std::vector<std::string>& predictions,
                          const std::vector<Formality>& references);

}  // namespace strata
