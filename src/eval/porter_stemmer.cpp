#include "strata/eval/porter_stemmer.h"

#include <array>
#include <cstddef>
#include <span>
#include <utility>

// Each step follows NLTK's step of the same name, including its quirks: a rule list is
// decided by the FIRST rule whose suffix matches; when that rule's condition fails the word
// is left alone and no later rule is tried.
namespace strata {

namespace {

bool is_vowel_letter(char c) { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u'; }

// Porter's consonant: any letter but a, e, i, o, u, and y unless y follows a consonant.
// Whether word[i] is one depends only on word[0..i], so a stem and its word agree.
bool is_consonant(std::string_view word, std::size_t i) {
  bool consonant = true;
  for (std::size_t k = 0; k <= i; ++k) {
    const char c = word[k];
    if (is_vowel_letter(c)) {
      consonant = false;
    } else if (c == 'y') {
      consonant = k == 0 || !consonant;
    } else {
      consonant = true;
    }
  }
  return consonant;
}

// m in [C](VC){m}[V]: the number of vowel -> consonant transitions.
int measure(std::string_view stem) {
  int m = 0;
  bool previous_vowel = false;
  bool consonant = true;
  for (std::size_t k = 0; k < stem.size(); ++k) {
    const char c = stem[k];
    if (is_vowel_letter(c)) {
      consonant = false;
    } else if (c == 'y') {
      consonant = k == 0 || !consonant;
    } else {
      consonant = true;
    }
    if (consonant && previous_vowel) ++m;
    previous_vowel = !consonant;
  }
  return m;
}

bool contains_vowel(std::string_view stem) {
  for (std::size_t i = 0; i < stem.size(); ++i) {
    if (!is_consonant(stem, i)) return true;
  }
  return false;
}

// *d: ends with a double consonant.
bool ends_double_consonant(std::string_view word) {
  const std::size_t n = word.size();
  return n >= 2 && word[n - 1] == word[n - 2] && is_consonant(word, n - 1);
}

// *o: ends consonant-vowel-consonant, the last not w, x or y; NLTK also accepts a
// two-letter vowel-consonant word.
bool ends_cvc(std::string_view word) {
  const std::size_t n = word.size();
  if (n >= 3) {
    const char last = word[n - 1];
    return is_consonant(word, n - 3) && !is_consonant(word, n - 2) && is_consonant(word, n - 1) &&
           last != 'w' && last != 'x' && last != 'y';
  }
  return n == 2 && !is_consonant(word, 0) && is_consonant(word, 1);
}

// A condition sees the whole word and the length of the stem left once the suffix is cut.
using Condition = bool (*)(std::string_view word, std::size_t stem_length);

struct Rule {
  std::string_view suffix;
  std::string_view replacement;
  Condition condition;  // nullptr: unconditional
};

bool m_positive(std::string_view word, std::size_t stem_length) {
  return measure(word.substr(0, stem_length)) > 0;
}
bool m_above_one(std::string_view word, std::size_t stem_length) {
  return measure(word.substr(0, stem_length)) > 1;
}
// (m>1 and (*S or *T)) ION
bool m_above_one_after_s_or_t(std::string_view word, std::size_t stem_length) {
  return m_above_one(word, stem_length) &&
         (word[stem_length - 1] == 's' || word[stem_length - 1] == 't');
}
// NLTK keeps the 'l' of LOGI with the stem when measuring, so that "geologi" stems.
bool m_positive_with_l(std::string_view word, std::size_t stem_length) {
  return measure(word.substr(0, stem_length + 1)) > 0;
}

void apply_first_match(std::string& word, std::span<const Rule> rules) {
  for (const Rule& rule : rules) {
    if (!word.ends_with(rule.suffix)) continue;
    const std::size_t stem_length = word.size() - rule.suffix.size();
    if (rule.condition == nullptr || rule.condition(word, stem_length)) {
      word.replace(stem_length, std::string::npos, rule.replacement);
    }
    return;
  }
}

void step1a(std::string& word) {
  if (word.size() == 4 && word.ends_with("ies")) {  // "dies" -> "die", not "di"
    word.pop_back();
    return;
  }
  static constexpr std::array<Rule, 4> rules{{
      {"sses", "ss", nullptr},
      {"ies", "i", nullptr},
      {"ss", "ss", nullptr},
      {"s", "", nullptr},
  }};
  apply_first_match(word, rules);
}

void step1b(std::string& word) {
  if (word.ends_with("ied")) {  // "died" -> "die" but "spied" -> "spi"
    word.erase(word.size() == 4 ? 3 : word.size() - 2);
    return;
  }
  if (word.ends_with("eed")) {
    if (measure(std::string_view(word).substr(0, word.size() - 3)) > 0) word.pop_back();
    return;
  }
  std::size_t cut = 0;
  if (word.ends_with("ed")) cut = 2;
  if (word.ends_with("ing")) cut = 3;
  if (cut == 0 || !contains_vowel(std::string_view(word).substr(0, word.size() - cut))) return;
  word.erase(word.size() - cut);
  // Tidy the stem: AT/BL/IZ get their E back, a double consonant other than l, s, z is
  // undoubled, and a short cvc stem gets an E.
  if (word.ends_with("at") || word.ends_with("bl") || word.ends_with("iz")) {
    word += 'e';
  } else if (ends_double_consonant(word)) {
    const char last = word.back();
    if (last != 'l' && last != 's' && last != 'z') word.pop_back();
  } else if (measure(word) == 1 && ends_cvc(word)) {
    word += 'e';
  }
}

void step1c(std::string& word) {
  // NLTK: y -> i after a consonant that is not the whole stem ("cry" -> "cri", "by" stays).
  const std::size_t n = word.size();
  if (n >= 3 && word[n - 1] == 'y' && is_consonant(word, n - 2)) word[n - 1] = 'i';
}

void step2(std::string& word) {
  // NLTK applies ALLI -> AL first and then runs step 2 again on the result.
  if (word.ends_with("alli") && m_positive(word, word.size() - 4)) {
    word.erase(word.size() - 2);
    step2(word);
    return;
  }
  static constexpr std::array<Rule, 22> rules{{
      {"ational", "ate", m_positive}, {"tional", "tion", m_positive},
      {"enci", "ence", m_positive},   {"anci", "ance", m_positive},
      {"izer", "ize", m_positive},    {"bli", "ble", m_positive},
      {"alli", "al", m_positive},     {"entli", "ent", m_positive},
      {"eli", "e", m_positive},       {"ousli", "ous", m_positive},
      {"ization", "ize", m_positive}, {"ation", "ate", m_positive},
      {"ator", "ate", m_positive},    {"alism", "al", m_positive},
      {"iveness", "ive", m_positive}, {"fulness", "ful", m_positive},
      {"ousness", "ous", m_positive}, {"aliti", "al", m_positive},
      {"iviti", "ive", m_positive},   {"biliti", "ble", m_positive},
      {"fulli", "ful", m_positive},   {"logi", "log", m_positive_with_l},
  }};
  apply_first_match(word, rules);
}

void step3(std::string& word) {
  static constexpr std::array<Rule, 7> rules{{
      {"icate", "ic", m_positive},
      {"ative", "", m_positive},
      {"alize", "al", m_positive},
      {"iciti", "ic", m_positive},
      {"ical", "ic", m_positive},
      {"ful", "", m_positive},
      {"ness", "", m_positive},
  }};
  apply_first_match(word, rules);
}

void step4(std::string& word) {
  static constexpr std::array<Rule, 19> rules{{
      {"al", "", m_above_one},   {"ance", "", m_above_one}, {"ence", "", m_above_one},
      {"er", "", m_above_one},   {"ic", "", m_above_one},   {"able", "", m_above_one},
      {"ible", "", m_above_one}, {"ant", "", m_above_one},  {"ement", "", m_above_one},
      {"ment", "", m_above_one}, {"ent", "", m_above_one},  {"ion", "", m_above_one_after_s_or_t},
      {"ou", "", m_above_one},   {"ism", "", m_above_one},  {"ate", "", m_above_one},
      {"iti", "", m_above_one},  {"ous", "", m_above_one},  {"ive", "", m_above_one},
      {"ize", "", m_above_one},
  }};
  apply_first_match(word, rules);
}

void step5a(std::string& word) {
  // Both E rules are tried (unlike a rule list): (m>1) E -> and (m=1 and not *o) E ->.
  if (!word.ends_with("e")) return;
  const std::string_view stem = std::string_view(word).substr(0, word.size() - 1);
  const int m = measure(stem);
  if (m > 1 || (m == 1 && !ends_cvc(stem))) word.pop_back();
}

void step5b(std::string& word) {
  // (m>1 and *d and *L) -> single letter; NLTK measures the word less one l.
  if (word.ends_with("ll") && measure(std::string_view(word).substr(0, word.size() - 1)) > 1) {
    word.pop_back();
  }
}

// NLTK's table of irregular forms, looked up before anything else.
const std::string_view* irregular_stem(std::string_view word) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 16> forms{{
      {"sky", "sky"},
      {"skies", "sky"},
      {"dying", "die"},
      {"lying", "lie"},
      {"tying", "tie"},
      {"news", "news"},
      {"innings", "inning"},
      {"inning", "inning"},
      {"outings", "outing"},
      {"outing", "outing"},
      {"cannings", "canning"},
      {"canning", "canning"},
      {"howe", "howe"},
      {"proceed", "proceed"},
      {"exceed", "exceed"},
      {"succeed", "succeed"},
  }};
  for (const auto& form : forms) {
    if (form.first == word) return &form.second;
  }
  return nullptr;
}

}  // namespace

std::string porter_stem(std::string_view word) {
  // NLTK looks the word up before lowering it, so "Skies" is stemmed by the rules.
  if (const std::string_view* stem = irregular_stem(word)) return std::string(*stem);
  std::string stem(word);
  for (char& c : stem) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  if (stem.size() <= 2) return stem;
  step1a(stem);
  step1b(stem);
  step1c(stem);
  step2(stem);
  step3(stem);
  step4(stem);
  step5a(stem);
  step5b(stem);
  return stem;
}

}  // namespace strata
