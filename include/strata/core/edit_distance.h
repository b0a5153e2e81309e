#pragma once
// Edit distance for "did you mean ...?" suggestions on mistyped names.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

// Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of two
// adjacent characters each cost 1 (a swap is the commonest typo: "trian" for "train").
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `word`, if one is near enough to be a plausible typo: at most a
// third of the word's length away (and at least 2 edits are always tolerated). Ties go to
// the earlier candidate.
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);

}  // namespace strata
