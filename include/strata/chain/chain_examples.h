#pragma once
// The test examples a chain runs on: a source sentence to translate, the context that resolves
// its ambiguity, the reference translation, and, where the data knows it, the answer a
// perfect user would give (the formality label, the man-page section, ...).
//
// Read from JSON Lines, one object per example:
//   {"id": "...", "source": "...", "context": "...", "reference": "..." | "targets": {"fr": "..."},
//    "question": "...", "answer": "...", "label": "...", "type": "..."}
// Only source and a reference (or a target in the chosen language) are required; records
// whose "targets" lack the language are skipped and counted. `strata data ambig` writes this
// shape. A path ending in .tsv is read as a released AmbigMT file (data/ambigmt.h), the label
// (formal / informal / masculine / feminine) doubling as the perfect user's answer.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace strata::chain {

struct ChainExample {
  std::string id;
  std::string source, context, reference;
  std::string question;  // the question a good translator asks, when the data has one; "" none
  std::string answer;    // what a perfect user answers; "" when unknown
  std::string label;   // the ambiguity's resolution, for metrics (formality, section); "" none
  std::string type;    // the ambiguity: "formality", "polysemy", "section", ...; "" unknown
};

struct ChainData {
  std::vector<ChainExample> examples;
  std::size_t skipped_without_target = 0;
};

// strata::Error naming the file, line and field for a record without a source or a
// reference, or a field of the wrong type; for a data set with no examples left.
ChainData read_chain_examples(const std::filesystem::path& file, const std::string& language);

}  // namespace strata::chain
