#pragma once
// The Porter stemmer exactly as NLTK's nltk.stem.porter.PorterStemmer computes it in its
// default mode, NLTK_EXTENSIONS (checked against nltk 3.8), because that is the stemmer
// rouge-score applies. NLTK_EXTENSIONS departs from the 1980 paper in ways that change
// scores, for example: a table of irregular forms ("skies" -> "sky", "dying" -> "die"),
// "ies"/"ied" on four-letter words -> "ie" ("dies" -> "die"), y -> i only after a
// consonant that is not the whole stem ("fly" -> "fli", "enjoy" stays), ALLI -> AL applied
// first, and the extra rules FULLI -> FUL and LOGI -> LOG in step 2.
#include <string>
#include <string_view>

namespace strata {

// The stem of an ASCII word. Upper-case letters are lowered first, as NLTK does; words of
// one or two characters come back lowered but otherwise unchanged. Digits and any other
// bytes count as consonants, as they do in NLTK.
std::string porter_stem(std::string_view word);

}  // namespace strata
