#include "strata/chain/chain_training.h"

#include <fmt/format.h>

#include "strata/chain/chain_prompts.h"
#include "strata/core/error.h"
#include "strata/core/files.h"

#include <nlohmann/json.hpp>

namespace strata::chain {

ChainStep parse_chain_step(std::string_view name) {
  if (name == "no_extra") return ChainStep::kNoExtra;
  if (name == "with_context") return ChainStep::kWithContext;
  if (name == "ask") return ChainStep::kAsk;
  if (name == "user") return ChainStep::kUser;
  if (name == "translate") return ChainStep::kTranslate;
  throw Error(fmt::format("unknown chain step '{}': choose no_extra, with_context, ask, user or translate", name));
}

std::string chain_training_text(ChainStep step, const ChainExample& e) {
  const auto need = [&](const std::string& value, const char* field) {
    if (value.empty()) throw Error(fmt::format("example {}: no {}, which this step needs", e.id, field));
  };
  const ChainPrompts zero_shot;
  switch (step) {
    case ChainStep::kNoExtra:
      return no_extra_prompt(zero_shot, e.source) + " " + e.reference + "\n";
    case ChainStep::kWithContext:
      return with_context_prompt(zero_shot, e.source, e.context) + " " + e.reference + "\n";
    case ChainStep::kAsk:
      need(e.question, "question");
      return ask_prompt(zero_shot, e.source) + " " + e.question + "\n";
    case ChainStep::kUser:
      need(e.question, "question");
      need(e.answer, "answer");
      return user_prompt(zero_shot, e.source, e.context, e.question) + " " + e.answer + "\n";
    case ChainStep::kTranslate:
      need(e.question, "question");
      need(e.answer, "answer");
      return translate_prompt(zero_shot, e.source, e.question, e.answer) + " " + e.reference + "\n";
  }
  return "";
}

std::string_view chain_step_name(ChainStep step) {
  constexpr std::string_view names[] = {"no_extra", "with_context", "ask", "user", "translate"};
  return names[static_cast<int>(step)];
}

std::size_t write_chain_training_docs(const std::filesystem::path& data, const std::string& language,
                                      const std::vector<ChainStep>& steps, const std::filesystem::path& out) {
  const ChainData loaded = read_chain_examples(data, language);
  std::string text;
  std::size_t documents = 0;
  for (const ChainExample& example : loaded.examples)
    for (const ChainStep step : steps) {
      const nlohmann::json doc = {{"id", fmt::format("{}/{}", example.id, chain_step_name(step))},
                                  {"text", chain_training_text(step, example)}};
      text += doc.dump() + "\n";
      ++documents;
    }
  write_file_atomic(out, text);
  return documents;
}

}  // namespace strata::chain
