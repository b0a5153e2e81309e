#include "generation_flags.h"

#include "strata/train/run_config.h"

namespace strata::cli {

std::shared_ptr<GenerationFlags> add_generation_flags(CLI::App* sub) {
  auto f = std::make_shared<GenerationFlags>();
  auto& v = f->values;
  f->beam = sub->add_option("--beam", v.beam_size, "beam size; 1 = greedy");
  f->max_length = sub->add_option("--max-length", v.max_length, "tokens generated at most");
  f->min_length = sub->add_option("--min-length", v.min_length, "eos banned before this many tokens");
  f->length_penalty = sub->add_option("--length-penalty", v.length_penalty, "beam score = log-prob / length^penalty");
  f->no_repeat = sub->add_option("--no-repeat-ngram", v.no_repeat_ngram_size, "ban repeated n-grams of this size; 0 = off");
  f->sample = sub->add_flag("--sample", v.do_sample, "sample instead of searching");
  f->top_k = sub->add_option("--top-k", v.top_k, "sampling: keep the k most likely tokens");
  f->top_p = sub->add_option("--top-p", v.top_p, "sampling: nucleus mass");
  f->temperature = sub->add_option("--temperature", v.temperature, "sampling: temperature");
  f->seed = sub->add_option("--seed", v.seed, "sampling: seed");
  sub->add_flag("--no-cache", f->no_cache, "recompute every step instead of caching keys and values (slow)");
  return f;
}

decode::GenerationOptions generation_for(const GenerationFlags& f, const recipes::LoadedModel& model) {
  decode::GenerationOptions g = train::generation_options(model.run);
  const decode::GenerationOptions& v = f.values;
  if (f.beam->count()) g.beam_size = v.beam_size;
  if (f.max_length->count()) g.max_length = v.max_length;
  if (f.min_length->count()) g.min_length = v.min_length;
  if (f.length_penalty->count()) g.length_penalty = v.length_penalty;
  if (f.no_repeat->count()) g.no_repeat_ngram_size = v.no_repeat_ngram_size;
  if (f.sample->count()) {
    g.do_sample = true;
    g.beam_size = 1;
  }
  if (f.top_k->count()) g.top_k = v.top_k;
  if (f.top_p->count()) g.top_p = v.top_p;
  if (f.temperature->count()) g.temperature = v.temperature;
  if (f.seed->count()) g.seed = v.seed;
  g.check();
  return g;
}

}  // namespace strata::cli
