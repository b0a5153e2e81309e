// Thesis C.1.6's formality rules (es / fr / de), the lexical tagger that feeds them plain
// text, and F-Acc.
#include "strata/eval/formality.h"

#include <fmt/format.h>
#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>

#include "strata/core/error.h"
#include "strata/core/utf8.h"
#include "strata/eval/bleu.h"

namespace strata {

namespace {

using Words = std::span<const std::string_view>;

bool in(std::string_view word, Words list) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

bool ends_with_any(std::string_view word, Words endings) {
  return std::any_of(endings.begin(), endings.end(), [&](std::string_view e) { return word.ends_with(e); });
}

// The lists of C.1.6, as printed.
constexpr std::string_view kEsVerbInformalEndings[] = {"s", "ste", "os"};
constexpr std::string_view kEsPronounFormal[] = {"usted"};
constexpr std::string_view kEsPronounInformal[] = {"tú", "tu", "te", "vos", "vosotros"};
constexpr std::string_view kEsDeterminerFormal[] = {"su"};
constexpr std::string_view kEsDeterminerInformal[] = {"tu", "vosotros", "vosotras"};
constexpr std::string_view kFrVerbInformalEndings[] = {"x", "s", "ons"};
constexpr std::string_view kFrVerbFormalEndings[] = {"ez"};
constexpr std::string_view kFrPronounFormal[] = {"vous"};
constexpr std::string_view kFrPronounInformal[] = {"tu"};
constexpr std::string_view kFrDeterminerFormal[] = {"vos", "votre"};
constexpr std::string_view kFrDeterminerInformal[] = {"tes", "ton", "ta", "toi"};
constexpr std::string_view kDePronounFormal[] = {"Sie", "Ihr", "Ihre", "Ihren", "Ihrem", "Ihrer", "Ihres"};
constexpr std::string_view kDePronounInformal[] = {"du",     "dein",   "deine",  "deinen",
                                                   "deinem", "deiner", "deines", "dich"};
constexpr std::string_view kDePronounInformalWithExclamation[] = {"er", "sie", "es", "ihr"};

// For the lexical tagger's verb slots: pronouns a verb follows, and the clitics (and
// negation) that may stand between them. Spanish la/las/los are left out of the triggers
// because they are articles far more often ("la casa").
constexpr std::string_view kEsVerbTriggers[] = {
    "yo", "tú", "él",    "ella",  "usted", "nosotros", "nosotras", "vosotros", "vosotras", "ellos",
    "ellas", "ustedes", "vos", "me", "te", "se", "nos", "os", "le", "les", "lo"};
constexpr std::string_view kEsSkippable[] = {"no", "me", "te",  "se",  "nos", "os",
                                             "le", "les", "lo", "la", "los", "las"};
constexpr std::string_view kFrVerbTriggers[] = {"je", "j", "tu", "il", "elle", "on", "nous", "vous", "ils", "elles"};
constexpr std::string_view kFrSkippable[] = {"ne", "n",  "me",  "m", "te", "t",   "se",   "s",   "le",
                                             "la", "les", "l", "lui", "leur", "y", "en", "nous", "vous"};

// A word of the sentence and whether a hyphen joins it to the word before ("avez-vous").
struct Word {
  std::string_view text;
  bool hyphen_before = false;
};

bool is_word_character(char32_t c) {
  const utf8proc_category_t category = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return (category >= UTF8PROC_CATEGORY_LU && category <= UTF8PROC_CATEGORY_LO) ||
         (category >= UTF8PROC_CATEGORY_MN && category <= UTF8PROC_CATEGORY_ME);
}

std::vector<Word> letter_words(std::string_view sentence) {
  std::vector<Word> words;
  std::size_t start = std::string_view::npos;
  for (std::size_t i = 0; i <= sentence.size();) {
    const std::size_t length = i < sentence.size() ? utf8_sequence_length(sentence, i) : 0;
    const bool letter = length > 0 && is_word_character(utf8_decode_at(sentence, i, length));
    if (letter && start == std::string_view::npos) {
      start = i;
    } else if (!letter && start != std::string_view::npos) {
      words.push_back({sentence.substr(start, i - start), start > 0 && sentence[start - 1] == '-'});
      start = std::string_view::npos;
    }
    i += std::max<std::size_t>(1, length);
  }
  return words;
}

// How words are compared with the lists: in NFC (a decomposed "tú" is "tú"); es and fr
// ignore case, de does not.
std::string normalise(FormalityLanguage language, std::string_view word) {
  const std::string text(word);
  utf8proc_uint8_t* composed = utf8proc_NFC(reinterpret_cast<const utf8proc_uint8_t*>(text.c_str()));
  std::string nfc = composed ? reinterpret_cast<const char*>(composed) : text;
  std::free(composed);
  return language == FormalityLanguage::kGerman ? nfc : python_lower(nfc);
}

bool lexical_pronoun(FormalityLanguage language, std::string_view w) {
  switch (language) {
    case FormalityLanguage::kSpanish: return in(w, kEsPronounFormal) || in(w, kEsPronounInformal);
    case FormalityLanguage::kFrench: return in(w, kFrPronounFormal) || in(w, kFrPronounInformal);
    case FormalityLanguage::kGerman:
      return in(w, kDePronounFormal) || in(w, kDePronounInformal) || in(w, kDePronounInformalWithExclamation);
  }
  return false;
}

bool lexical_determiner(FormalityLanguage language, std::string_view w) {
  switch (language) {
    case FormalityLanguage::kSpanish: return in(w, kEsDeterminerFormal) || in(w, kEsDeterminerInformal);
    case FormalityLanguage::kFrench: return in(w, kFrDeterminerFormal) || in(w, kFrDeterminerInformal);
    case FormalityLanguage::kGerman: return false;
  }
  return false;
}

}  // namespace

FormalityLanguage parse_formality_language(std::string_view code) {
  if (code == "es") return FormalityLanguage::kSpanish;
  if (code == "fr") return FormalityLanguage::kFrench;
  if (code == "de") return FormalityLanguage::kGerman;
  throw Error(fmt::format("formality: no rules for language '{}' (es, fr, de)", code));
}

Formality parse_formality(std::string_view label) {
  if (label == "formal") return Formality::kFormal;
  if (label == "informal") return Formality::kInformal;
  if (label == "neutral") return Formality::kNeutral;
  throw Error(fmt::format("formality: unknown label '{}' (formal, informal, neutral)", label));
}

std::string_view formality_name(Formality formality) {
  switch (formality) {
    case Formality::kFormal: return "formal";
    case Formality::kInformal: return "informal";
    case Formality::kNeutral: return "neutral";
  }
  return "neutral";
}

std::vector<std::string> formality_words(std::string_view sentence) {
  std::vector<std::string> out;
  for (const Word& word : letter_words(sentence)) out.emplace_back(word.text);
  return out;
}

std::vector<TaggedWord> tag_formality_words(FormalityLanguage language, std::string_view sentence) {
  const std::vector<Word> words = letter_words(sentence);
  std::vector<std::string> keys;
  for (const Word& word : words) keys.push_back(normalise(language, word.text));
  std::vector<TaggedWord> tagged;
  for (std::size_t i = 0; i < words.size(); ++i)
    tagged.push_back({std::string(words[i].text), false, lexical_pronoun(language, keys[i]),
                      lexical_determiner(language, keys[i])});
  if (language == FormalityLanguage::kGerman) return tagged;  // its rules name no verbs

  const bool spanish = language == FormalityLanguage::kSpanish;
  const Words triggers = spanish ? Words(kEsVerbTriggers) : Words(kFrVerbTriggers);
  const Words skipped = spanish ? Words(kEsSkippable) : Words(kFrSkippable);
  for (std::size_t i = 0; i < words.size(); ++i) {
    // An inverted subject ("-vous") has its verb before it, handled below.
    if (!in(keys[i], triggers) || words[i].hyphen_before) continue;
    std::size_t j = i + 1;
    while (j < words.size() && in(keys[j], skipped)) ++j;
    if (j < words.size()) tagged[j].verb = true;
  }
  if (language == FormalityLanguage::kFrench) {  // inversion: "avez-vous", "va-t-il"
    for (std::size_t i = 0; i + 1 < words.size(); ++i) {
      std::size_t j = i + 1;
      if (keys[j] == "t" && words[j].hyphen_before && j + 1 < words.size()) ++j;
      if (words[j].hyphen_before && in(keys[j], triggers)) tagged[i].verb = true;
    }
  }
  return tagged;
}

FormalityEvidence formality_evidence(FormalityLanguage language, std::span<const TaggedWord> words,
                                     bool exclamation) {
  FormalityEvidence e;
  bool any_verb = false;
  bool all_verbs_informal = true;  // es: every verb has an informal ending
  for (const TaggedWord& word : words) {
    const std::string w = normalise(language, word.text);
    switch (language) {
      case FormalityLanguage::kSpanish:
        if (word.verb) {
          any_verb = true;
          all_verbs_informal = all_verbs_informal && ends_with_any(w, kEsVerbInformalEndings);
        }
        e.pronoun_formal |= word.pronoun && in(w, kEsPronounFormal);
        e.pronoun_informal |= word.pronoun && in(w, kEsPronounInformal);
        e.determiner_formal |= word.determiner && in(w, kEsDeterminerFormal);
        e.determiner_informal |= word.determiner && in(w, kEsDeterminerInformal);
        break;
      case FormalityLanguage::kFrench:
        e.verb_informal |= word.verb && ends_with_any(w, kFrVerbInformalEndings);
        e.verb_formal |= word.verb && ends_with_any(w, kFrVerbFormalEndings);
        e.pronoun_formal |= word.pronoun && in(w, kFrPronounFormal);
        e.pronoun_informal |= word.pronoun && in(w, kFrPronounInformal);
        e.determiner_formal |= word.determiner && in(w, kFrDeterminerFormal);
        e.determiner_informal |= word.determiner && in(w, kFrDeterminerInformal);
        break;
      case FormalityLanguage::kGerman:
        e.pronoun_formal |= !exclamation && word.pronoun &&
                            in(w, kDePronounFormal);
        e.pronoun_informal |=
            word.pronoun && (in(w, kDePronounInformal) ||
                             (exclamation && in(w, kDePronounInformalWithExclamation)));
        break;
    }
  }
  switch (language) {
    case FormalityLanguage::kSpanish:
      e.verb_informal = any_verb && all_verbs_informal;
      e.informal = e.verb_informal && e.pronoun_informal && e.determiner_informal;
      e.formal = e.pronoun_formal && e.determiner_formal;
      break;
    case FormalityLanguage::kFrench:
      e.informal = e.verb_informal && e.pronoun_informal && e.determiner_informal;
      e.formal = e.verb_formal && e.pronoun_formal && e.determiner_formal;
      break;
    case FormalityLanguage::kGerman:
      e.informal = e.pronoun_informal;
      e.formal = e.pronoun_formal;
      break;
  }
  return e;
}

Formality classify_formality(FormalityLanguage language, std::span<const TaggedWord> words,
                             bool exclamation) {
  const FormalityEvidence e = formality_evidence(language, words, exclamation);
  if (e.formal == e.informal) return Formality::kNeutral;
  return e.formal ? Formality::kFormal : Formality::kInformal;
}

Formality classify_formality(FormalityLanguage language, std::string_view sentence) {
  return classify_formality(language, tag_formality_words(language, sentence),
                            sentence.find('!') != std::string_view::npos);
}

double formality_accuracy(FormalityLanguage language, const std::vector<std::string>& predictions,
                          const std::vector<Formality>& references) {
  if (predictions.size() != references.size() || predictions.empty())
    throw Error(fmt::format("formality_accuracy: {} predictions and {} references (need equal, > 0)",
                            predictions.size(), references.size()));
  std::size_t right = 0;
  for (std::size_t i = 0; i < predictions.size(); ++i)
    right += classify_formality(language, predictions[i]) == references[i];
  return static_cast<double>(right) / static_cast<double>(predictions.size());
}

}  // namespace strata
