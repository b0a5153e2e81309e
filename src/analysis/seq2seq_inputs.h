#pragma once
// What `strata analyze attention` and `strata analyze spectrum` take from a loaded seq2seq
// model besides its weights: the examples, cut as it was trained, and its lower layers.
#include <cstddef>
#include <string>
#include <vector>

#include "strata/data/seq2seq_examples.h"
#include "strata/recipes/loaded_model.h"

namespace strata::analysis {

// Layers [0, split) are the lower ones: the model's own split (model.hierarchy_split), so a
// hierarchical design's halves are the ones it treats apart.
std::size_t lower_split(const recipes::LoadedModel& m);

// The first `count` examples of `data`, cut as the model was trained; fewer when the file has
// fewer, which is said on stderr.
std::vector<Seq2SeqExample> first_examples(const std::string& data, const recipes::LoadedModel& m,
                                           std::size_t count, bool quiet);

}  // namespace strata::analysis
