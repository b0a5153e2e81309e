#include "strata/chain/chain_runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <set>
#include <thread>

#include "strata/core/error.h"
#include "strata/core/progress.h"
#include "strata/core/split_mix64.h"
#include "strata/data/manpage_corpus.h"

namespace strata::chain {

ChainSystem parse_chain_system(std::string_view name) {
  if (name == "no_extra") return ChainSystem::kNoExtra;
  if (name == "with_context") return ChainSystem::kWithContext;
  if (name == "chain") return ChainSystem::kChain;
  throw Error(fmt::format("unknown chain system '{}': choose no_extra, with_context or chain", name));
}

std::string_view chain_system_name(ChainSystem system) {
  switch (system) {
    case ChainSystem::kNoExtra: return "no_extra";
    case ChainSystem::kWithContext: return "with_context";
    case ChainSystem::kChain: return "chain";
  }
  return "?";
}

namespace {

// The wrong answer that replaces `right` in a corrupted example: one of the other known
// answers, chosen by the example's own draw.
class Corruption {
 public:
  Corruption(const std::vector<ChainExample>& examples, const ChainRunOptions& options) : options_(options) {
    if (options.corrupt <= 0) return;
    std::set<std::string> known;
    for (const ChainExample& example : examples)
      if (!example.answer.empty()) known.insert(example.answer);
    answers_.assign(known.begin(), known.end());
    if (answers_.size() < 2)
      throw Error("corrupting the user's answers needs examples with at least two distinct known answers");
  }

  // Whether the example is corrupted, and then its wrong answer.
  bool apply(const ChainExample& example, std::string& answer) const {
    if (options_.corrupt <= 0) return false;
    SplitMix64 draw({options_.seed, stable_hash(example.id)});
    if (draw.uniform() >= options_.corrupt) return false;
    const std::string& right = example.answer.empty() ? answer : example.answer;
    std::vector<const std::string*> wrong;
    for (const std::string& candidate : answers_)
      if (candidate != right) wrong.push_back(&candidate);
    answer = *wrong[draw.below(wrong.size())];
    return true;
  }

 private:
  const ChainRunOptions& options_;
  std::vector<std::string> answers_;
};

std::string ask(ChainBackend& backend, const std::string& prompt, const ChainRunOptions& options) {
  CompletionCall call;
  call.prompt = prompt;
  call.max_tokens = options.max_tokens;
  call.temperature = options.temperature;
  call.seed = options.seed;
  return first_line(backend.complete(call));
}

ChainOutput run_one(ChainSystem system, const ChainExample& example, const ChainPrompts& prompts,
                    ChainBackend& translator, ChainBackend* user, const Corruption& corruption,
                    const ChainRunOptions& options) {
  ChainOutput out;
  switch (system) {
    case ChainSystem::kNoExtra:
      out.translation = ask(translator, no_extra_prompt(prompts, example.source), options);
      break;
    case ChainSystem::kWithContext:
      out.translation = ask(translator, with_context_prompt(prompts, example.source, example.context), options);
      break;
    case ChainSystem::kChain:
      out.question = ask(translator, ask_prompt(prompts, example.source), options);
      out.user_answer = user ? ask(*user, user_prompt(prompts, example.source, example.context, out.question), options)
                             : example.answer;
      out.answer = out.user_answer;
      out.corrupted = corruption.apply(example, out.answer);
      out.translation = ask(translator, translate_prompt(prompts, example.source, out.question, out.answer), options);
      break;
  }
  return out;
}

}  // namespace

std::vector<ChainOutput> run_chain_system(ChainSystem system, const std::vector<ChainExample>& examples,
                                          const ChainPrompts& prompts, ChainBackend& translator, ChainBackend* user,
                                          const ChainRunOptions& options) {
  if (system == ChainSystem::kChain && !user)
    for (const ChainExample& example : examples)
      if (example.answer.empty())
        throw Error(fmt::format("example {}: the perfect user needs the example's answer, and it has none", example.id));
  const Corruption corruption(examples, options);
  std::vector<ChainOutput> outputs(examples.size());
  Progress progress(fmt::format("chain: {}", chain_system_name(system)), examples.size(), "examples", options.quiet);
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const auto work = [&] {
    for (std::size_t i = next++; i < examples.size(); i = next++) {
      try {
        outputs[i] = run_one(system, examples[i], prompts, translator, user, corruption, options);
      } catch (...) {
        const std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next = examples.size();  // stop handing out work
      }
      progress.add();
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t t = 1; t < std::max<std::size_t>(options.concurrency, 1); ++t) threads.emplace_back(work);
  work();
  for (std::thread& thread : threads) thread.join();
  progress.finish();
  if (failure) std::rethrow_exception(failure);
  return outputs;
}

}  // namespace strata::chain
