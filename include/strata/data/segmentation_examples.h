#pragma once
// Topic segmentation examples, as Cross-Segment BERT (Lukasik et al. 2020; seed 003 §4.1)
// frames the task. A candidate boundary lies between every two consecutive sentences of a
// document's body (sentences that encode to no token are passed over); it is a true
// boundary when the two sentences belong to different sections, so a section without
// sentences of its own contributes nothing. Each candidate is one example:
//
//   [CLS] left context [SEP] right context [SEP]
//
// the left context being the last context_tokens tokens before the boundary and the right
// context the first context_tokens after it, both crossing sentences and sections. [CLS] is
// the tokenizer's bos token; [SEP] its sep token, or its eos where it has none (as RoBERTa
// separates with </s>).
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "strata/doc/document.h"
#include "strata/doc/layout.h"

namespace strata {

class Tokenizer;

struct SegmentationOptions {
  std::size_t context_tokens = 128;  // tokens of left and of right context; at least 1
  // 0 keeps every candidate. Otherwise a document with more candidates keeps this many,
  // evenly spaced over its candidates whatever their label: the subsample keeps the base
  // rate of boundaries, so scores on it estimate scores on every candidate.
  std::size_t max_candidates_per_document = 0;
};

struct SegmentationExample {
  // "<document id>:<c>" for candidate c, the boundary after the document's sentence c
  // (counting the sentences that have tokens, from 0).
  std::string id;
  // layout.token holds the input ids. Per token: position in the example; section,
  // paragraph and sentence ids of the document (the specials: root section 0, paragraph and
  // sentence -1, as make_layout gives bos and eos); segment 0 for [CLS], the left context
  // and the first [SEP], 1 for the right context and the last [SEP] (the "intra-context"
  // pattern of seed 003 §4.2 masks by it). tree is the document's section tree.
  Layout layout;
  int label = 0;  // 1 = a true boundary
};

// The examples of one document's candidates in document order (all, or the subsample the
// options ask for); none when it has fewer than two sentences. strata::Error when the
// tokenizer has no bos token, or neither a sep nor an eos token, or context_tokens is 0.
std::vector<SegmentationExample> make_segmentation_examples(const Document& document,
                                                            const Tokenizer& tokenizer,
                                                            const SegmentationOptions& options);

struct SegmentationLoadStats {
  std::size_t documents = 0;   // documents read
  std::size_t skipped = 0;     // documents with fewer than two sentences: no candidate
  std::size_t candidates = 0;  // examples made
  std::size_t boundaries = 0;  // examples labelled 1
};

// The examples of every document of a JSONL dataset (any shape DatasetReader knows), in
// file order, tokenized in parallel. A document with fewer than two sentences has no
// candidate: it is counted in `skipped` (with a warning), not an error. strata::Error naming
// the file when no example is left, and on any bad line (FILE:LINE).
std::vector<SegmentationExample> load_segmentation_examples(const std::filesystem::path& jsonl,
                                                            const Tokenizer& tokenizer,
                                                            const SegmentationOptions& options,
                                                            bool show_progress,
                                                            SegmentationLoadStats* stats = nullptr);

// The per-example cost plan_batches (token_batches.h) expects: the example's tokens.
std::vector<std::size_t> segmentation_costs(std::span<const SegmentationExample> examples);

}  // namespace strata
