#include "strata/train/run_config.h"

#include <fmt/format.h>

#include <algorithm>

#include "strata/core/error.h"
#include "strata/core/strings.h"
#include "strata/data/qs_examples.h"
#include "strata/data/sentence_extraction_examples.h"
#include "strata/data/tlm_examples.h"
#include "strata/models/model_config.h"

namespace strata::train {

ConfigSchema run_schema() {
  ConfigSchema s;
  models::ModelConfig::declare(s);
  const DataOptions d;
  s.add("data.train", std::string(), "training set: JSONL (any dataset shape); language models also take text files");
  s.add("data.valid", std::string(), "validation set for loss, ROUGE and early stopping (optional)");
  s.add("data.test", std::string(), "test set (optional; `strata eval summarize` reads it)");
  s.add("data.tokenizer", std::string(), "a tokenizer directory made by `strata tokenizer train`");
  s.add("data.max_source_tokens", std::int64_t(d.truncation.max_source_tokens), "source tokens kept, eos included");
  s.add("data.max_target_tokens", std::int64_t(d.truncation.max_target_tokens), "target tokens kept, eos included");
  s.add("data.truncation", std::string(truncation_policy_name(d.truncation.policy)),
        "how long sources are cut: head (first tokens) or section_lead (each section's lead)");
  s.add("data.segments", std::int64_t(0),
        "K of the source layout's even split into segments, which prefix blocking (UniBlock) and structured "
        "attention read; 0 = model.prefix_encoder_blocks");
  s.add("data.section_tokens", std::string(section_tokens_name(d.truncation.section_tokens)),
        "markers before each section's source text: none, sectok ([SEC]) or lvlsectok ([SEC-L1], [SEC-L2], …; seed 001 §5.2)");
  s.add("data.lead_section", std::string(),
        "a top-level section read first, before the others and the cut (e.g. \"DESCRIPTION\" of a man page); "
        "\"\" = document order");
  s.add("data.block_size", std::int64_t(d.block_size), "language models: tokens per training chunk");
  s.add("data.blocks", std::string("stream"),
        "language models: stream (documents concatenated and cut every data.block_size tokens), document "
        "(each document its own blocks, padded in a batch: a prompt and its completion are never split or read "
        "after another document) or completion (each document one block whose last line is 'Field: completion', "
        "trained on the completion only, as `strata chain text` writes them)");
  s.add("data.train_fraction", d.train_fraction,
        "share of the training set used, 0 < F <= 1: round(F x N) examples, at least 1, in their order "
        "(low-resource runs, seed 000 §6.6; `--train-fraction` sets it)");
  s.add("data.fraction_seed", std::int64_t(d.fraction_seed),
        "seed of the data.train_fraction subset, apart from train.seed so that every training seed sees the same "
        "examples");
  s.add("data.task", std::string(),
        "what an encoder model learns: extractive (pick summary sentences, seed 003 §4.1), segmentation "
        "(topic boundaries between sentences) or mlm (BERT's masked-LM pretraining, `strata pretrain`); denoise "
        "pretrains a seq2seq model on BART's noise (`strata pretrain`); qs_hierarchy trains a seq2seq model on "
        "question-summary hierarchies (seed 001 §5.1, data.qs_task; data files as `strata data qs-manpages` writes "
        "them); seq2seq models otherwise summarise; tlm "
        "trains a causal_lm on thesis ch. 2's formatted sequences ([INTRO] [EXTRACT] [SUMMARY] [REST], tlm.*), and "
        "language models otherwise read plain text");
  s.add("data.qs_task", std::string("hierarchy"),
        "data.task = qs_hierarchy: hierarchy (Task I, QSGen-Hier: root question + document -> the linearised "
        "hierarchy, starting with the root's summary) or child_questions (Task II, QSGen-ChildQ: a QS pair + "
        "document -> its children's questions)");
  const DenoisingOptions noise;
  s.add("pretrain.mask_ratio", noise.mask_ratio,
        "denoise: share of the text tokens masked by text infilling, each span replaced by one <mask>");
  s.add("pretrain.poisson_lambda", noise.poisson_lambda, "denoise: mean masked span length (Poisson; 0 inserts a mask)");
  s.add("pretrain.permute_sentences", noise.permute_sentences, "denoise: shuffle the sentences of each section");
  s.add("pretrain.whole_documents", noise.whole_documents,
        "denoise: read every document whole, cut into chunks of data.max_source_tokens, instead of only its first "
        "data.max_source_tokens tokens (a base that sees all of long documents; mlm always reads them whole)");
  s.add("pretrain.mlm_probability", 0.15,
        "mlm: share of the real tokens chosen for prediction (of those 80% become <mask>, 10% a random token, 10% stay)");
  s.add("extract.top_k", std::int64_t(1), "extractive, sent_clf: sentences selected per document (the thesis: the mean summary length)");
  s.add("extract.trigram_blocking", false, "extractive: skip a sentence that shares a trigram with one already selected");
  s.add("extract.oracle_sentences", std::int64_t(3), "extractive: most sentences in a greedy ROUGE oracle label");
  const SentenceExtractionOptions caps;
  s.add("extract.max_sentences", std::int64_t(caps.max_sentences), "sent_clf, sent_ptr: sentences read per document");
  s.add("extract.max_sentence_tokens", std::int64_t(caps.max_sentence_tokens),
        "sent_clf, sent_ptr: tokens read per sentence");
  s.add("extract.beam_size", std::int64_t(4), "sent_ptr: beams of the pointer's search");
  s.add("extract.max_steps", std::int64_t(4), "sent_ptr: most sentences the pointer picks before its stop");
  s.add("mtl.tasks", std::string(),
        "ca_mtl: the suite's tasks to learn, comma-separated, in the heads' order; \"\" = every task of "
        "data.train's tasks.json");
  s.add("mtl.sampler", std::string("mt-uncertainty"),
        "ca_mtl: how batches are drawn: mt-uncertainty (Algorithm 1: the b most uncertain of b candidates per task), "
        "mt-uncertainty-weighted (the public code's scores, weighted by each task's mean uncertainty), uniform "
        "(pi_rand: a task per batch, uniformly), size (pi_|task|) or temperature (pi ~ |D|^alpha)");
  s.add("mtl.temperature_alpha", 0.5, "ca_mtl: alpha of the temperature sampler (1 = size, 0 = uniform)");
  s.add("mtl.new_task_embedding", std::string(),
        "ca_mtl with train.base_model: how a task the base lacks starts: \"\" or random (a fresh embedding), or "
        "the name of one of the base's tasks (its embedding copied; thesis Tables 3.3 and B.2)");
  s.add("mtl.batch_size", std::int64_t(32), "ca_mtl: b, the examples of a batch (and the candidates per task under mt-uncertainty)");
  const TlmFormat tlm;
  s.add("tlm.extracts", std::string("gold"),
        "data.task = tlm: the extract block: gold (the chapter-2 oracle on the reference), none (TLM, TLM-I), or a "
        "JSONL file of {id, prediction} lines (a model's extracts, `strata extract --out`)");
  s.add("tlm.intro_sections", std::string("SYNOPSIS,DESCRIPTION"),
        "data.task = tlm: headings of the sections that make the intro (comma-separated); the other sections are "
        "the rest. \"\", or a document with none of them: the whole document is the intro");
  s.add("tlm.intro_tokens", std::int64_t(tlm.intro_tokens), "data.task = tlm: a, the intro's budget in tokens");
  s.add("tlm.extract_tokens", std::int64_t(tlm.extract_tokens), "data.task = tlm: b, the extract's budget");
  s.add("tlm.summary_tokens", std::int64_t(tlm.summary_tokens), "data.task = tlm: c, the summary's budget");
  s.add("tlm.rest", tlm.with_rest, "data.task = tlm: the rest of the document follows the summary as more LM data");
  s.add("segment.context_tokens", std::int64_t(128), "segmentation: tokens of left and of right context per candidate boundary");
  s.add("segment.max_candidates", std::int64_t(0),
        "segmentation: candidate boundaries kept per document, evenly spaced whatever their label (so the base rate "
        "stays); 0 = all. `strata segment` applies the run's value to its data too");
  const TrainOptions t;
  s.add("train.seed", std::int64_t(t.seed), "seed of initialisation, data order and dropout");
  s.add("train.max_steps", t.max_steps, "optimizer updates");
  s.add("train.max_epochs", t.max_epochs, "passes over the training set; 0 = no limit");
  s.add("train.max_minutes", t.max_minutes, "wall-clock budget; 0 = none (a budget makes runs machine-dependent)");
  s.add("train.expected_minutes", t.expected_minutes,
        "how long the run should take; past it, one warning and training goes on to max_steps (results stay "
        "machine-independent); 0 = no warning");
  s.add("train.learning_rate", t.schedule.peak_lr, "peak learning rate");
  s.add("train.min_learning_rate", t.schedule.min_lr, "learning rate at the end of the decay");
  s.add("train.warmup_steps", t.schedule.warmup_steps, "linear warm-up from 0");
  s.add("train.schedule", lr_decay_name(t.schedule.decay), "decay after warm-up: linear, cosine or constant");
  s.add("train.weight_decay", t.weight_decay, "AdamW decoupled weight decay (not on biases and norms)");
  s.add("train.beta1", t.beta1, "AdamW beta1");
  s.add("train.beta2", t.beta2, "AdamW beta2");
  s.add("train.eps", t.eps, "AdamW epsilon");
  s.add("train.clip_norm", t.clip_norm, "gradient clipping by global norm; 0 = off");
  s.add("train.accumulation", t.accumulation, "batches whose gradients make one update");
  s.add("train.label_smoothing", t.label_smoothing, "label smoothing of the training loss");
  s.add("train.max_tokens", std::int64_t(t.max_tokens), "batch budget: rows × longest example (source + target)");
  s.add("train.max_rows", std::int64_t(t.max_rows),
        "most examples a batch; 0 = as many as max_tokens allows (short examples then make wide batches whose "
        "rows × target length × vocabulary tensors are large)");
  s.add("train.log_every", t.log_every, "steps between training-loss lines in metrics.jsonl");
  s.add("train.eval_every", t.eval_every, "steps between evaluations (and checkpoints)");
  s.add("train.eval_docs", t.eval_docs, "validation documents decoded for ROUGE at each evaluation; 0 = none");
  s.add("train.keep_checkpoints", t.keep_checkpoints, "step checkpoints kept (the best is always kept)");
  s.add("train.patience", t.patience, "evaluations without improvement before stopping; 0 = off");
  s.add("train.metric", t.metric, "what 'best' means: valid_loss (lower), rouge1 / rouge2 / rougeL (summarisers), f1 (segmentation), score (ca_mtl: the mean of the tasks' metrics) or "
        "mlm_accuracy (masked LM; higher)");
  s.add("train.freeze", std::vector<std::string>(), "glob patterns of parameter names to freeze");
  s.add("train.base_model", std::string(),
        "a trained run or checkpoint whose weights start this model (same architecture and sizes; tensors the base "
        "lacks, such as PALs, keep their initialisation); `strata train --base` sets it");
  s.add("train.base_exclude", std::vector<std::string>(),
        "glob patterns of parameter names not taken from train.base_model (they keep their initialisation): a new "
        "head over a base trained for another task, e.g. [\"classifier.*\"] over a masked-LM encoder");
  s.add("train.train_only", std::vector<std::string>(),
        "glob patterns of the only parameter names that train (every other parameter is frozen); empty = all");
  s.add("train.threads", t.threads, "CPU threads; 0 = every core");
  s.add("train.nonfinite", std::string("stop"),
        "a NaN or infinite loss or gradient: stop (keeping the last good checkpoint) or skip (that step makes no "
        "update, a warning names it, metrics count skipped_steps)");
  const decode::GenerationOptions g;
  s.add("decode.max_length", g.max_length, "tokens generated at most, eos included");
  s.add("decode.min_length", g.min_length, "eos is banned before this many tokens");
  s.add("decode.beam_size", std::int64_t(4), "beams; 1 = greedy");
  s.add("decode.length_penalty", g.length_penalty, "beam score = log-prob / length^penalty");
  s.add("decode.no_repeat_ngram_size", std::int64_t(3), "ban repeating n-grams of this size; 0 = off");
  s.add("decode.early_stopping", true, "beam search stops once beam_size hypotheses are finished");
  s.add("decode.do_sample", g.do_sample, "sample instead of searching");
  s.add("decode.top_k", g.top_k, "sampling: keep the k most likely tokens; 0 = off");
  s.add("decode.top_p", g.top_p, "sampling: nucleus mass; 1 = off");
  s.add("decode.temperature", g.temperature, "sampling: temperature");
  s.add("decode.seed", std::int64_t(g.seed), "sampling: seed");
  s.add("decode.forced_bos_id", g.forced_bos_id, "the first generated token is this one; -1 = free (BART's forced_bos_token_id)");
  s.add("decode.forced_eos", g.forced_eos, "the last token decode.max_length allows is eos (BART's forced_eos_token_id)");
  return s;
}

std::vector<Seq2SeqExample> load_seq2seq_data(const std::filesystem::path& path, const Tokenizer& tokenizer,
                                              const Config& config, bool verbose) {
  const TruncationOptions truncation = data_options(config).truncation;
  if (config.get<std::string>("data.task") == "qs_hierarchy")
    return load_qs_examples(path, tokenizer, truncation, qs_task_from_name(config.get<std::string>("data.qs_task")),
                            verbose);
  return load_seq2seq_examples(path, tokenizer, truncation, verbose);
}

DataOptions data_options(const Config& c) {
  DataOptions d;
  d.train = c.get<std::string>("data.train");
  d.valid = c.get<std::string>("data.valid");
  d.test = c.get<std::string>("data.test");
  d.tokenizer = c.get<std::string>("data.tokenizer");
  d.truncation.max_source_tokens = static_cast<std::size_t>(c.get<std::int64_t>("data.max_source_tokens"));
  d.truncation.max_target_tokens = static_cast<std::size_t>(c.get<std::int64_t>("data.max_target_tokens"));
  d.truncation.policy = truncation_policy_from_name(c.get<std::string>("data.truncation"));
  // The layout owns the segments; the model's prefix blocks only say how many by default.
  std::int64_t segments = c.get<std::int64_t>("data.segments");
  if (segments < 0) throw Error(fmt::format("data.segments: must be >= 0, got {}", segments));
  if (segments == 0)
    segments = c.contains("model.prefix_encoder_blocks") ? c.get<std::int64_t>("model.prefix_encoder_blocks") : 1;
  d.truncation.segments = static_cast<int>(std::max<std::int64_t>(segments, 1));
  d.truncation.section_tokens = section_tokens_from_name(c.get<std::string>("data.section_tokens"));
  d.truncation.lead_section = c.get<std::string>("data.lead_section");
  d.block_size = static_cast<std::size_t>(c.get<std::int64_t>("data.block_size"));
  d.blocking = parse_lm_blocking(c.get<std::string>("data.blocks"));
  d.train_fraction = c.get<double>("data.train_fraction");
  if (!(d.train_fraction > 0 && d.train_fraction <= 1))
    throw Error(fmt::format("data.train_fraction: must be in (0, 1], got {}", d.train_fraction));
  d.fraction_seed = static_cast<std::uint64_t>(c.get<std::int64_t>("data.fraction_seed"));
  return d;
}

DenoisingOptions denoising_options(const Config& c) {
  DenoisingOptions o;
  o.mask_ratio = c.get<double>("pretrain.mask_ratio");
  o.poisson_lambda = c.get<double>("pretrain.poisson_lambda");
  o.permute_sentences = c.get<bool>("pretrain.permute_sentences");
  o.whole_documents = c.get<bool>("pretrain.whole_documents");
  check(o);
  return o;
}

TrainOptions train_options(const Config& c) {
  TrainOptions t;
  auto positive = [&](const char* key) {
    const std::int64_t v = c.get<std::int64_t>(key);
    if (v <= 0) throw Error(std::string(key) + ": must be positive, got " + std::to_string(v));
    return v;
  };
  auto non_negative = [&](const char* key) {
    const std::int64_t v = c.get<std::int64_t>(key);
    if (v < 0) throw Error(std::string(key) + ": must be 0 or more, got " + std::to_string(v));
    return v;
  };
  t.seed = static_cast<std::uint64_t>(c.get<std::int64_t>("train.seed"));
  t.max_steps = positive("train.max_steps");
  t.max_epochs = c.get<std::int64_t>("train.max_epochs");
  t.max_minutes = c.get<double>("train.max_minutes");
  t.expected_minutes = c.get<double>("train.expected_minutes");
  t.schedule.peak_lr = c.get<double>("train.learning_rate");
  t.schedule.min_lr = c.get<double>("train.min_learning_rate");
  t.schedule.warmup_steps = c.get<std::int64_t>("train.warmup_steps");
  t.schedule.total_steps = t.max_steps;
  t.schedule.decay = parse_lr_decay(c.get<std::string>("train.schedule"));
  learning_rate(t.schedule, 0);  // checks the schedule before any data is read
  t.weight_decay = c.get<double>("train.weight_decay");
  t.beta1 = c.get<double>("train.beta1");
  t.beta2 = c.get<double>("train.beta2");
  t.eps = c.get<double>("train.eps");
  t.clip_norm = c.get<double>("train.clip_norm");
  t.accumulation = positive("train.accumulation");
  t.label_smoothing = c.get<double>("train.label_smoothing");
  t.max_tokens = static_cast<std::size_t>(positive("train.max_tokens"));
  t.max_rows = static_cast<std::size_t>(non_negative("train.max_rows"));
  t.log_every = positive("train.log_every");
  t.eval_every = positive("train.eval_every");
  t.eval_docs = c.get<std::int64_t>("train.eval_docs");
  t.keep_checkpoints = c.get<std::int64_t>("train.keep_checkpoints");
  t.patience = c.get<std::int64_t>("train.patience");
  t.metric = c.get<std::string>("train.metric");
  if (t.metric != "valid_loss" && t.metric != "rouge1" && t.metric != "rouge2" && t.metric != "rougeL" &&
      t.metric != "f1" && t.metric != "mlm_accuracy" && t.metric != "score")
    throw Error("train.metric: unknown metric '" + t.metric +
                "' (known: valid_loss, rouge1, rouge2, rougeL, f1, mlm_accuracy, score)");
  t.freeze = c.get<std::vector<std::string>>("train.freeze");
  t.train_only = c.get<std::vector<std::string>>("train.train_only");
  t.threads = c.get<std::int64_t>("train.threads");
  const std::string nonfinite = c.get<std::string>("train.nonfinite");
  if (nonfinite != "stop" && nonfinite != "skip")
    throw Error("train.nonfinite: '" + nonfinite + "' is neither stop nor skip");
  t.skip_nonfinite = nonfinite == "skip";
  return t;
}

decode::GenerationOptions generation_options(const Config& c) {
  decode::GenerationOptions g;
  g.max_length = c.get<std::int64_t>("decode.max_length");
  g.min_length = c.get<std::int64_t>("decode.min_length");
  g.beam_size = c.get<std::int64_t>("decode.beam_size");
  g.length_penalty = c.get<double>("decode.length_penalty");
  g.no_repeat_ngram_size = c.get<std::int64_t>("decode.no_repeat_ngram_size");
  g.early_stopping = c.get<bool>("decode.early_stopping");
  g.do_sample = c.get<bool>("decode.do_sample");
  g.top_k = c.get<std::int64_t>("decode.top_k");
  g.top_p = c.get<double>("decode.top_p");
  g.temperature = c.get<double>("decode.temperature");
  g.seed = static_cast<std::uint64_t>(c.get<std::int64_t>("decode.seed"));
  g.forced_bos_id = c.get<std::int64_t>("decode.forced_bos_id");
  g.forced_eos = c.get<bool>("decode.forced_eos");
  g.check();
  return g;
}

TlmFormat tlm_format(const Config& c) {
  TlmFormat f;
  f.window = static_cast<std::size_t>(c.get<std::int64_t>("data.block_size"));
  const auto budget = [&](const char* key) {
    const auto value = c.get<std::int64_t>(key);
    if (value <= 0) throw Error(fmt::format("{}: must be positive, got {}", key, value));
    return static_cast<std::size_t>(value);
  };
  f.intro_tokens = budget("tlm.intro_tokens");
  f.extract_tokens = budget("tlm.extract_tokens");
  f.summary_tokens = budget("tlm.summary_tokens");
  f.with_rest = c.get<bool>("tlm.rest");
  f.intro_sections = split_list(c.get<std::string>("tlm.intro_sections"));
  f.check();
  return f;
}

}  // namespace strata::train
