#pragma once
// Scores of a polysemy output, a comma-separated list of candidate translations of one word
// (thesis ch. 4: "aproximadamente, cerca de, alrededor de, casi, más o menos"):
//   Hit@n   whether the reference is among the first n list ITEMS (not tokens: "cerca de"
//           is one item, the 2nd; the thesis's example hits "cerca de" at n = 3, not "casi");
//   BLEU@n  the best sentence BLEU (eval/bleu.h: SacreBLEU's sentence_bleu, 13a, exp
//           smoothing, effective order) of the first n items against the reference, the
//           stand-in for the thesis's BLEURT@n;
//   chrF@n  the same with sentence chrF (eval/chrf.h), which the miniature uses in place of
//           BLEURT.
// Items: the output split on ',', each trimmed of whitespace, empty ones dropped. With fewer
// than n items all of them count; n = 0 is a strata::Error.
//
// Hit@n matches an item with the reference after this normalisation of both: Unicode
// lower-casing (Python's str.lower, so "Cerca de" and "CERCA DE" hit), whitespace trimmed and
// inner runs of whitespace made one space. Accents and punctuation are kept: an accent can
// tell two words apart (es más / mas, fr où / ou), and AmbigMT's reference words carry
// no punctuation, so an item that does is not the reference word. BLEU@n and chrF@n score
// the items as they are (both metrics have their own preprocessing).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

std::vector<std::string> split_list_items(std::string_view output);
// The normalised form Hit@n compares.
std::string normalize_list_item(std::string_view item);

bool hit_at_n(const std::vector<std::string>& items, std::string_view reference, std::size_t n);
double bleu_at_n(const std::vector<std::string>& items, std::string_view reference, std::size_t n);
double chrf_at_n(const std::vector<std::string>& items, std::string_view reference, std::size_t n);

// Means over samples: outputs[i] (raw, split here) against references[i]; Hit@n as a
// fraction in [0, 1], BLEU@n and chrF@n on their 0..100 scale. strata::Error when the sizes
// differ or there are no samples.
double mean_hit_at_n(const std::vector<std::string>& outputs, const std::vector<std::string>& references,
                     std::size_t n);
double mean_bleu_at_n(const std::vector<std::string>& outputs, const std::vector<std::string>& references,
                      std::size_t n);
double mean_chrf_at_n(const std::vector<std::string>& outputs, const std::vector<std::string>& references,
                      std::size_t n);

}  // namespace strata
