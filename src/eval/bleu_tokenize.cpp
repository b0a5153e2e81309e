// The "intl" tokeniser (mteval-v14 international), the option names, and the per-segment
// preprocessing SacreBLEU applies before counting n-grams.
#include <utf8proc.h>

#include <string>
#include <string_view>
#include <vector>

#include "strata/core/error.h"
#include "strata/core/utf8.h"
#include "strata/eval/bleu.h"

namespace strata {

namespace {

struct CodePoint {
  utf8proc_category_t category;
  std::string_view bytes;
};

std::vector<CodePoint> decode_all(std::string_view text) {
  std::vector<CodePoint> out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_sequence_length(text, i);
    if (length == 0) {  // an invalid byte: unassigned, neither number, punctuation nor symbol
      out.push_back({UTF8PROC_CATEGORY_CN, text.substr(i, 1)});
      ++i;
      continue;
    }
    const auto c = static_cast<utf8proc_int32_t>(utf8_decode_at(text, i, length));
    out.push_back({utf8proc_category(c), text.substr(i, length)});
    i += length;
  }
  return out;
}

bool is_number(const CodePoint& c) {  // \p{N}
  return c.category == UTF8PROC_CATEGORY_ND || c.category == UTF8PROC_CATEGORY_NL ||
         c.category == UTF8PROC_CATEGORY_NO;
}
bool is_punctuation(const CodePoint& c) {  // \p{P}
  return c.category >= UTF8PROC_CATEGORY_PC && c.category <= UTF8PROC_CATEGORY_PO;
}
bool is_symbol(const CodePoint& c) {  // \p{S}
  return c.category >= UTF8PROC_CATEGORY_SM && c.category <= UTF8PROC_CATEGORY_SO;
}

// s/(A)(B)/<before>\1<middle>\2<after>/g over code points, matches taken left to right
// without overlap (Python's re.sub).
template <typename First, typename Second>
std::string substitute_pairs(std::string_view text, First first, Second second,
                             std::string_view before, std::string_view middle,
                             std::string_view after) {
  const std::vector<CodePoint> cps = decode_all(text);
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  std::size_t i = 0;
  while (i < cps.size()) {
    if (i + 1 < cps.size() && first(cps[i]) && second(cps[i + 1])) {
      out.append(before);
      out.append(cps[i].bytes);
      out.append(middle);
      out.append(cps[i + 1].bytes);
      out.append(after);
      i += 2;
    } else {
      out.append(cps[i].bytes);
      ++i;
    }
  }
  return out;
}

// Python's str.rstrip(): trailing Unicode whitespace.
std::string_view rstrip_python(std::string_view text) {
  const auto tokens = split_python_whitespace(text);
  if (tokens.empty()) return {};
  const std::string_view last = tokens.back();
  return text.substr(0, static_cast<std::size_t>(last.data() - text.data()) + last.size());
}

}  // namespace

std::string tokenize_intl(std::string_view line) {
  const auto not_number = [](const CodePoint& c) { return !is_number(c); };
  // Punctuation is split off unless it sits between digits ("3.14", "1,000"). As in
  // mteval-v14, a number ending the line keeps its period ("in 1999."), because the line
  // is not padded with spaces.
  std::string text = substitute_pairs(line, not_number, is_punctuation, "", " ", " ");
  text = substitute_pairs(text, is_punctuation, not_number, " ", " ", "");
  std::string spaced;
  spaced.reserve(text.size() * 2);
  for (const CodePoint& c : decode_all(text)) {
    if (is_symbol(c)) spaced.push_back(' ');
    spaced.append(c.bytes);
    if (is_symbol(c)) spaced.push_back(' ');
  }
  return join_tokens(spaced);
}

std::string bleu_preprocess(std::string_view segment, const BleuOptions& options) {
  std::string lowered;
  if (options.lowercase) {
    lowered = python_lower(segment);
    segment = lowered;
  }
  segment = rstrip_python(segment);
  switch (options.tokenize) {
    case BleuTokenize::k13a:
      return tokenize_13a(segment);
    case BleuTokenize::kIntl:
      return tokenize_intl(segment);
    case BleuTokenize::kNone:
      break;
  }
  return join_tokens(segment);
}

BleuTokenize parse_bleu_tokenize(std::string_view name) {
  if (name == "13a") return BleuTokenize::k13a;
  if (name == "intl") return BleuTokenize::kIntl;
  if (name == "none") return BleuTokenize::kNone;
  throw Error("unknown BLEU tokenizer '" + std::string(name) + "' (expected 13a, intl or none)");
}

BleuSmooth parse_bleu_smooth(std::string_view name) {
  if (name == "exp") return BleuSmooth::kExp;
  if (name == "floor") return BleuSmooth::kFloor;
  if (name == "add-k") return BleuSmooth::kAddK;
  if (name == "none") return BleuSmooth::kNone;
  throw Error("unknown BLEU smoothing '" + std::string(name) +
              "' (expected exp, floor, add-k or none)");
}

std::string_view bleu_tokenize_name(BleuTokenize tokenize) {
  switch (tokenize) {
    case BleuTokenize::k13a:
      return "13a";
    case BleuTokenize::kIntl:
      return "intl";
    case BleuTokenize::kNone:
      break;
  }
  return "none";
}

std::string_view bleu_smooth_name(BleuSmooth smooth) {
  switch (smooth) {
    case BleuSmooth::kExp:
      return "exp";
    case BleuSmooth::kFloor:
      return "floor";
    case BleuSmooth::kAddK:
      return "add-k";
    case BleuSmooth::kNone:
      break;
  }
  return "none";
}

}  // namespace strata
