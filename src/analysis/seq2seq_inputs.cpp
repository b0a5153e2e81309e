#include "seq2seq_inputs.h"

#include <cstdio>

#include "strata/models/prefix_settings.h"
#include "strata/train/run_config.h"

namespace strata::analysis {

std::size_t lower_split(const recipes::LoadedModel& m) {
  return static_cast<std::size_t>(models::hierarchy_split(m.config, m.config.encoder_layers));
}

std::vector<Seq2SeqExample> first_examples(const std::string& data, const recipes::LoadedModel& m,
                                           std::size_t count, bool quiet) {
  std::vector<Seq2SeqExample> examples = load_seq2seq_examples(
      data, *m.tokenizer, train::data_options(m.run).truncation, /*show_progress=*/!quiet);
  if (examples.size() < count)
    std::fprintf(stderr, "note: %s has %zu usable examples, fewer than --examples %zu; using %zu\n", data.c_str(),
                 examples.size(), count, examples.size());
  else
    examples.resize(count);
  return examples;
}

}  // namespace strata::analysis
