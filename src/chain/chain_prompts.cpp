#include "strata/chain/chain_prompts.h"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/strings.h"

namespace strata::chain {

namespace {

// The fields of an exemplar by tag, and which exemplar fields a prompt shows.
std::string ChainExemplar::*field_of(char tag) {
  switch (tag) {
    case 'S': return &ChainExemplar::source;
    case 'C': return &ChainExemplar::context;
    case 'Q': return &ChainExemplar::question;
    case 'U': return &ChainExemplar::answer;
    case 'A': return &ChainExemplar::translation;
    default: return nullptr;
  }
}

std::string* section_of(ChainPrompts& p, std::string_view name) {
  if (name == "ask") return &p.ask;
  if (name == "user") return &p.user;
  if (name == "translate") return &p.translate;
  if (name == "no-extra") return &p.no_extra;
  if (name == "with-context") return &p.with_context;
  return nullptr;
}

// One exemplar as it is read: its fields and the line each was given on (0 = not given).
struct PendingExemplar {
  ChainExemplar exemplar;
  std::array<std::size_t, 5> lines{};
  std::size_t first_line = 0;
};

constexpr std::string_view kTags = "SCQUA";

void finish_exemplar(PendingExemplar& pending, ChainPrompts& prompts, const std::filesystem::path& file) {
  if (pending.first_line == 0) return;
  for (const char tag : {'S', 'A'})
    if (pending.lines[kTags.find(tag)] == 0)
      throw error_at(file, pending.first_line, std::string(1, tag),
                     "an exemplar needs its source (S:) and translation (A:)");
  prompts.exemplars.push_back(std::move(pending.exemplar));
  pending = {};
}

}  // namespace

ChainPrompts parse_chain_prompts(std::string_view text, const std::filesystem::path& file) {
  ChainPrompts prompts;
  std::string* instruction = nullptr;  // the section being read, unless exemplars
  bool in_exemplars = false;
  PendingExemplar pending;
  std::string* last_field = nullptr;
  std::size_t number = 0;
  for (std::string_view rest = text; !rest.empty() || number == 0;) {
    const std::size_t end = rest.find('\n');
    const std::string_view raw = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    ++number;
    const std::string_view line = trim(raw);
    if (line.starts_with('#')) continue;
    if (line.starts_with('[') && line.ends_with(']') && line.find(' ') == std::string_view::npos) {
      const std::string_view name = line.substr(1, line.size() - 2);
      finish_exemplar(pending, prompts, file);
      last_field = nullptr;
      in_exemplars = name == "exemplars";
      instruction = in_exemplars ? nullptr : section_of(prompts, name);
      if (!in_exemplars && !instruction)
        throw error_at(file, number, std::string(name),
                       "unknown section (ask, user, translate, no-extra, with-context, exemplars)");
      continue;
    }
    if (instruction) {
      if (!line.empty()) *instruction += (instruction->empty() ? "" : "\n") + std::string(line);
      continue;
    }
    if (!in_exemplars) {
      if (line.empty()) continue;
      throw error_at(file, number, "", "text before the first section ([ask], ..., [exemplars])");
    }
    if (line.empty()) {
      finish_exemplar(pending, prompts, file);
      last_field = nullptr;
      continue;
    }
    if (line.size() >= 2 && line[1] == ':' && field_of(line[0])) {
      const std::size_t index = kTags.find(line[0]);
      if (pending.lines[index] != 0)
        throw error_at(file, number, std::string(1, line[0]),
                       fmt::format("given twice in one exemplar (first on line {}); separate exemplars with a "
                                   "blank line",
                                   pending.lines[index]));
      if (pending.first_line == 0) pending.first_line = number;
      pending.lines[index] = number;
      last_field = &(pending.exemplar.*field_of(line[0]));
      *last_field = std::string(trim(line.substr(2)));
      continue;
    }
    if (!last_field)
      throw error_at(file, number, std::string(line.substr(0, 2)), "an exemplar line starts with S:, C:, Q:, U: or A:");
    *last_field += "\n" + std::string(line);
  }
  finish_exemplar(pending, prompts, file);
  return prompts;
}

ChainPrompts read_chain_prompts(const std::filesystem::path& file) { return parse_chain_prompts(read_file(file), file); }

namespace {

// instruction, every exemplar's `tags` fields, then the input's with the last tag left open.
std::string render(const ChainPrompts& p, const std::string& instruction, std::string_view tags,
                   const std::vector<std::string_view>& input, const char* step) {
  std::string prompt = instruction.empty() ? "" : instruction + "\n";
  for (std::size_t e = 0; e < p.exemplars.size(); ++e) {
    for (const char tag : tags) {
      const std::string& value = p.exemplars[e].*field_of(tag);
      if (value.empty())
        throw Error(fmt::format("chain prompts: exemplar {} has no {}: field, which the {} prompt shows", e + 1, tag,
                                step));
      prompt += fmt::format("{}: {}\n", tag, value);
    }
    prompt += "\n";
  }
  for (std::size_t i = 0; i < input.size(); ++i) prompt += fmt::format("{}: {}\n", tags[i], input[i]);
  return prompt + tags.back() + ":";
}

}  // namespace

std::string ask_prompt(const ChainPrompts& p, std::string_view source) {
  return render(p, p.ask, "SQ", {source}, "ask");
}

std::string user_prompt(const ChainPrompts& p, std::string_view source, std::string_view context,
                        std::string_view question) {
  return render(p, p.user, "SCQU", {source, context, question}, "user");
}

std::string translate_prompt(const ChainPrompts& p, std::string_view source, std::string_view question,
                             std::string_view answer) {
  return render(p, p.translate, "SQUA", {source, question, answer}, "translate");
}

std::string no_extra_prompt(const ChainPrompts& p, std::string_view source) {
  return render(p, p.no_extra, "SA", {source}, "no-extra");
}

std::string with_context_prompt(const ChainPrompts& p, std::string_view source, std::string_view context) {
  return render(p, p.with_context, "SCA", {source, context}, "with-context");
}

std::string first_line(std::string_view completion) {
  const std::string_view text = trim(completion);
  return std::string(trim(text.substr(0, text.find('\n'))));
}

}  // namespace strata::chain
