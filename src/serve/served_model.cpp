#include "strata/serve/served_model.h"

#include <torch/torch.h>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/data/extractive_examples.h"
#include "strata/data/sentence_extraction_examples.h"
#include "strata/data/seq2seq_examples.h"
#include "strata/decode/streaming.h"
#include "strata/decode/summarize.h"
#include "strata/doc/parse.h"
#include "strata/models/encoder_model.h"
#include "strata/models/sentence_extractors.h"
#include "strata/recipes/architectures.h"
#include "strata/recipes/loaded_model.h"
#include "strata/serve/streamed_text.h"
#include "strata/train/extractive_task.h"
#include "strata/train/run_config.h"
#include "strata/train/sentence_extraction_task.h"

namespace strata::serve {

struct ServedModel::Loaded {
  recipes::LoadedModel info;
  std::shared_ptr<models::LanguageModel> language_model;
  models::Seq2Seq seq2seq{nullptr};
  // Extractive models summarize by picking sentences: thesis ch. 2's sent_clf / sent_ptr, or
  // an encoder trained with data.task = extractive (BERTSum, seed 003).
  std::shared_ptr<models::SentenceExtractor> sentence_extractor;
  models::EncoderModel extractive_encoder{nullptr};
};

ServedModel::ServedModel(const std::filesystem::path& model, const std::filesystem::path& adapter, int threads)
    : loaded_(std::make_unique<Loaded>()), threads_(threads) {
  recipes::LoadOptions options;
  options.adapter = adapter;
  loaded_->info = recipes::load_model(model, options);
  loaded_->language_model = std::dynamic_pointer_cast<models::LanguageModel>(loaded_->info.module);
  if (auto seq2seq = std::dynamic_pointer_cast<models::Seq2SeqImpl>(loaded_->info.module))
    loaded_->seq2seq = models::Seq2Seq(seq2seq);
  loaded_->sentence_extractor = std::dynamic_pointer_cast<models::SentenceExtractor>(loaded_->info.module);
  if (auto encoder = std::dynamic_pointer_cast<models::EncoderModelImpl>(loaded_->info.module))
    if (loaded_->info.run.get<std::string>("data.task") == "extractive") loaded_->extractive_encoder = models::EncoderModel(encoder);
  if (!continues_text() && !summarizes())
    throw Error((loaded_->info.checkpoint / "config.json").string() + ": a " + architecture() +
                " model neither writes text nor summarizes; strata serve needs a language model (causal_lm, "
                "bst_lm), a seq2seq summarizer or an extractive model (sent_clf, sent_ptr, an encoder trained with "
                "data.task = extractive)");
}

ServedModel::~ServedModel() = default;

const std::string& ServedModel::architecture() const { return loaded_->info.config.architecture; }
bool ServedModel::continues_text() const { return loaded_->language_model != nullptr; }
bool ServedModel::summarizes() const {
  return !loaded_->seq2seq.is_empty() || loaded_->sentence_extractor || !loaded_->extractive_encoder.is_empty();
}
std::int64_t ServedModel::context_tokens() const { return loaded_->info.config.max_positions; }

std::int64_t ServedModel::count_tokens(const std::string& text) const {
  return static_cast<std::int64_t>(loaded_->info.tokenizer->encode(text).size());
}

void ServedModel::check_fits(std::int64_t prompt_tokens, std::int64_t max_tokens) const {
  if (prompt_tokens + max_tokens > context_tokens())
    throw ApiError(400, "invalid_request_error",
                   fmt::format("this model's context is {} tokens; the prompt has {} and max_tokens asks for {} more",
                               context_tokens(), prompt_tokens, max_tokens),
                   "max_tokens", "context_length_exceeded");
}

namespace {

// The prompt's token ids; an empty prompt starts from the tokenizer's bos (or eos), as a
// language model's first token needs something before it.
std::vector<std::int64_t> prompt_ids(const Tokenizer& tokenizer, const std::string& prompt) {
  const std::vector<std::int32_t> ids = tokenizer.encode(prompt);
  if (!ids.empty()) return {ids.begin(), ids.end()};
  const std::optional<std::int32_t> start = tokenizer.bos_id() ? tokenizer.bos_id() : tokenizer.eos_id();
  if (!start) throw ApiError(400, "invalid_request_error", "the prompt has no tokens", "prompt");
  return {*start};
}

// One choice's tokens and text while it is written.
struct Choice {
  std::vector<std::int32_t> tokens;
  std::int64_t generated = 0;  // tokens produced, eos included
  StreamedText text;
};

}  // namespace

GenerationResult ServedModel::complete(const GenerationJob& job, const ChoiceSink& sink,
                                       const std::function<bool()>& keep_going) const {
  if (!continues_text())
    throw ApiError(400, "invalid_request_error",
                   "the served model is a " + architecture() + " summarizer; use POST /v1/summarize", "model");
  const recipes::LoadedModel& info = loaded_->info;
  const Tokenizer& tokenizer = *info.tokenizer;
  const std::vector<std::int64_t> ids = prompt_ids(tokenizer, job.prompt);
  const auto prompt_tokens = static_cast<std::int64_t>(ids.size());
  check_fits(prompt_tokens, job.max_tokens);

  decode::GenerationOptions options;
  options.max_length = job.max_tokens;
  options.do_sample = job.temperature > 0;
  if (options.do_sample) {
    options.temperature = job.temperature;
    options.top_p = job.top_p;
    options.top_k = job.top_k;
    options.seed = job.seed;
  }
  options = decode::with_model_tokens(options, info.config);

  std::vector<Choice> choices(static_cast<std::size_t>(job.n));
  for (Choice& c : choices) c.text = StreamedText(job.stop);
  const auto flush = [&](std::size_t index) {
    Choice& c = choices[index];
    const std::string settled = c.text.take_settled();
    if (sink && (!settled.empty() || c.text.finished()))
      sink(static_cast<std::int64_t>(index), settled,
           c.text.finished() ? std::optional<std::string>(c.text.finish_reason()) : std::nullopt);
  };
  const auto observe = [&](const std::vector<std::int64_t>& tokens) {
    bool open = false;
    for (std::size_t i = 0; i < choices.size(); ++i) {
      Choice& c = choices[i];
      if (c.text.finished()) continue;
      ++c.generated;
      if (tokens[i] == options.eos_id) {
        c.text.finish("stop");
      } else {
        c.tokens.push_back(static_cast<std::int32_t>(tokens[i]));
        c.text.update(tokenizer.decode(c.tokens));
        if (c.generated == job.max_tokens) c.text.finish("length");
      }
      flush(i);
      open = open || !c.text.finished();
    }
    return open && keep_going();
  };

  torch::NoGradGuard no_grad;
  // OpenMP's thread count belongs to the calling thread: each request thread sets its own.
  if (threads_ > 0) at::set_num_threads(threads_);
  const at::Tensor prompts = torch::tensor(ids).unsqueeze(0).expand({job.n, prompt_tokens}).contiguous();
  const std::unique_ptr<decode::StepModel> stepper =
      recipes::find_architecture(architecture()).stepper(info.module, {prompts, {}, nullptr, /*use_cache=*/true});
  decode::generate_streaming(*stepper, options, observe);

  GenerationResult result;
  result.usage.prompt_tokens = prompt_tokens;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    Choice& c = choices[i];
    if (!c.text.finished()) {  // stopped by keep_going
      c.text.finish("length");
      flush(i);
    }
    result.choices.push_back({c.text.text(), c.text.finish_reason()});
    result.usage.completion_tokens += c.generated;
  }
  return result;
}

std::vector<std::string> ServedModel::summarize(const std::vector<std::string>& documents,
                                                std::int64_t max_tokens) const {
  if (!summarizes())
    throw ApiError(400, "invalid_request_error",
                   "the served model is a " + architecture() + " language model; use POST /v1/completions", "model");
  const recipes::LoadedModel& info = loaded_->info;
  std::vector<Document> parsed;
  for (std::size_t i = 0; i < documents.size(); ++i) {
    const std::string name = fmt::format("input[{}]", i);
    parsed.push_back(parse_document_text(documents[i], DocFormat::Auto, name));
    if (parsed.back().empty()) throw ApiError(400, "invalid_request_error", name + " has no text to summarize", "input");
  }
  torch::NoGradGuard no_grad;
  if (threads_ > 0) at::set_num_threads(threads_);
  if (loaded_->sentence_extractor || !loaded_->extractive_encoder.is_empty()) return extract(parsed);
  const TruncationOptions truncation = train::data_options(info.run).truncation;
  std::vector<Seq2SeqExample> examples;
  for (const Document& document : parsed) examples.push_back(make_source_example(document, *info.tokenizer, truncation));
  decode::SummarizeOptions options;
  options.generation = train::generation_options(info.run);
  options.generation.max_length = max_tokens;
  models::Seq2Seq model = loaded_->seq2seq;
  return decode::summarize(model, *info.tokenizer, examples, options);
}

namespace {

// Each document's example for an extractor; ApiError 400 naming the input that has no sentence.
template <class Example, class Make>
std::vector<Example> extraction_examples(const std::vector<Document>& documents, Make&& make) {
  std::vector<Example> examples;
  for (std::size_t i = 0; i < documents.size(); ++i) {
    std::optional<Example> example = make(documents[i]);
    if (!example)
      throw ApiError(400, "invalid_request_error", fmt::format("input[{}] has no sentence to extract", i), "input");
    examples.push_back(std::move(*example));
  }
  return examples;
}

}  // namespace

std::vector<std::string> ServedModel::extract(const std::vector<Document>& documents) const {
  const recipes::LoadedModel& info = loaded_->info;
  std::vector<std::string> summaries;
  if (loaded_->sentence_extractor) {
    SentenceExtractionOptions options = train::sentence_extraction_options(info.run);
    options.needs_reference = false;
    const auto examples = extraction_examples<SentenceExtractionExample>(
        documents, [&](const Document& d) { return make_sentence_extraction_example(d, *info.tokenizer, options); });
    const auto selected = train::extract_sentences(*loaded_->sentence_extractor, examples, info.config.pad_id,
                                                   train::extraction_options(info.run));
    for (std::size_t i = 0; i < examples.size(); ++i) summaries.push_back(join_sentences(examples[i].sentences, selected[i]));
    return summaries;
  }
  ExtractiveOptions options = train::extractive_options(info.run);
  options.needs_reference = false;
  const auto examples = extraction_examples<ExtractiveExample>(
      documents, [&](const Document& d) { return make_extractive_example(d, *info.tokenizer, options); });
  models::EncoderModel model = loaded_->extractive_encoder;
  return train::extractive_summaries(examples, train::sentence_scores(model, examples),
                                     train::extractive_selection(info.run));
}

}  // namespace strata::serve
