#pragma once
// BART's denoising objectives (Lewis et al. 2020, §2.2) for pretraining an encoder-decoder on
// raw text: the source is the document with its sentences shuffled (sentence permutation)
// and spans of its text replaced by one mask token each (text infilling); the target is the
// clean text. `strata pretrain` trains on them.
//
// The noise is a pure function of its seed; the training task seeds it with (train.seed,
// epoch, example), so every epoch sees fresh noise and a resumed run draws the same again.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "strata/data/seq2seq_examples.h"
#include "strata/doc/layout.h"

namespace strata {

class SplitMix64;
class Tokenizer;

struct DenoisingOptions {
  double mask_ratio = 0.3;        // share of the text tokens replaced by masks, in [0, 1]
  double poisson_lambda = 3.0;    // mean length of a masked span, in (0, 100]
  bool permute_sentences = true;  // shuffle the sentences of each section
  // Read every document whole, cut into chunks of max_source_tokens (load_denoising_chunks),
  // rather than only its first max_source_tokens tokens (load_denoising_examples).
  bool whole_documents = false;
};

// strata::Error naming the pretrain.* key of a value out of range.
void check(const DenoisingOptions& options);

// Lengths of masked spans, drawn from Poisson(lambda) until they cover `tokens`, the last one
// shortened so that they sum to `tokens` exactly. Spans of length 0 stay (each inserts a mask).
std::vector<std::size_t> draw_span_lengths(std::size_t tokens, double lambda, SplitMix64& rng);

// Sentence permutation: the sentences of each section in a random order. Sections stay in
// place, and so do the tokens outside any sentence (section markers, eos): shuffling across
// sections would let a structure-aware model read the original order off the section ids.
// Paragraph and sentence ids are renumbered in the new order of appearance.
Layout permute_sentences(const Layout& layout, std::uint64_t seed);

// Text infilling: round(mask_ratio × n) of the n text tokens (those inside a sentence) are
// masked in spans with Poisson(lambda) lengths, each span replaced by one `mask_id` token; a
// span of length 0 inserts one. Spans never touch (an unmasked token separates any two), so
// every mask stands for exactly one span. Positions and the `segments` even split are redone.
Layout infill_text(const Layout& layout, std::int32_t mask_id, double mask_ratio, double lambda, int segments,
                   std::uint64_t seed);

// A clean example's source (the document) noised as `options` say, permutation first, as in
// BART; the target (the clean document) and the rest are copied.
Seq2SeqExample add_noise(const Seq2SeqExample& clean, std::int32_t mask_id, const DenoisingOptions& options,
                         int segments, std::uint64_t seed);

// The seed of an example's noise in an epoch.
std::uint64_t noise_seed(std::uint64_t seed, std::uint64_t epoch, std::size_t example);

// Clean denoising examples of every document of a JSONL dataset (any shape; the summary is
// not needed) with a body, in file order: the source is the document cut as `truncation`
// says (section markers and eos included, max_target_tokens unused), the target the same
// tokens, the reference their text. strata::Error naming the file when no document has a body.
std::vector<Seq2SeqExample> load_denoising_examples(const std::filesystem::path& jsonl, const Tokenizer& tokenizer,
                                                    const TruncationOptions& truncation, bool show_progress);

// Clean denoising examples of every part of every document: each document read whole (as
// load_denoising_examples reads it with no length limit) and cut evenly into the fewest
// chunks of at most max_source_tokens tokens, eos included (cut_into_chunks, no opening
// token); ids "DOCUMENT#1", "DOCUMENT#2", ... For a base that sees all of a corpus of long
// documents, not only their openings. Errors as load_denoising_examples, and
// data.max_source_tokens when it is below 2.
std::vector<Seq2SeqExample> load_denoising_chunks(const std::filesystem::path& jsonl, const Tokenizer& tokenizer,
                                                  const TruncationOptions& truncation, bool show_progress);

}  // namespace strata
