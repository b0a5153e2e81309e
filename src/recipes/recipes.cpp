#include "strata/recipes/recipe.h"

#include "strata/core/edit_distance.h"
#include "strata/core/error.h"

namespace strata::recipes {

namespace {

// Seed 001's base model is Longformer (LED, window 1024 over inputs up to 16k tokens): a band
// plus global attention for the first token. Man-page sources are a few hundred tokens, so the
// band here is 64 tokens each side; override model.encoder_attention to change it.
constexpr const char* kWindow = R"json("heads": [{"mask": "window(32,32) | global(1)"}])json";

std::string encoder(const std::string& bias = "") {
  std::string spec = "model.encoder_attention={";
  spec += kWindow;
  if (!bias.empty()) spec.append(", \"bias\": ").append(bias);
  return spec + "}";
}

std::vector<std::string> on_lvlsectok(std::vector<std::string> more) {
  more.insert(more.begin(), "data.section_tokens=lvlsectok");
  return more;
}

// The designs (recipes/designs.h) that recipes name.
const char* kInjection = "pattern_injection";
const char* kPrefixAttention = "prefix_attention";

const char* kHibrids = R"({"kind": "hibrids", "max_path": 4, "max_level": 2})";
const char* kSelected = R"({"kind": "hibrids_selected"})";

// Seed 003's encoder tasks (§4.1) and pattern injection (§4.3). The four patterns of Table 1
// go one per head (4 of 8 heads) or twice over (8 of 8); segmentation's intra pattern is the
// left / right context instead of the sentence.
const char* kExtractive[] = {"model.architecture=encoder", "model.head=marker", "model.num_labels=2",
                             "data.task=extractive"};
const char* kSegmentation[] = {"model.architecture=encoder", "model.head=sequence", "model.num_labels=2",
                               "data.task=segmentation"};
constexpr const char* kSummaryPatterns = "matching_token,intra_sentence,previous_token,next_token";
constexpr const char* kContextPatterns = "matching_token,intra_context,previous_token,next_token";

template <std::size_t N>
std::vector<std::string> task(const char* (&base)[N], std::vector<std::string> more = {}) {
  std::vector<std::string> out(std::begin(base), std::end(base));
  out.insert(out.end(), more.begin(), more.end());
  return out;
}

std::string inject(const std::string& patterns) { return "model.inject_patterns=" + patterns; }

std::vector<Recipe> seed003_recipes() {
  std::vector<Recipe> out = {
      {"extractive", "003 §4.1", "BERTSum-style extractive summariser: an encoder scores each sentence at its [SEP]",
       task(kExtractive)},
      {"extractive-patterns", "003 §4.3 Table 1", "extractive + the four patterns injected in 4 heads of every layer",
       task(kExtractive, {inject(kSummaryPatterns)}), {kInjection}},
      {"extractive-patterns-all", "003 §4.3 Table 1", "extractive + the four patterns in every head (each in two of 8)",
       task(kExtractive, {inject(kSummaryPatterns), "model.inject_heads=-1"}), {kInjection}},
      {"segmentation", "003 §4.1", "Cross-Segment BERT: classifies each candidate boundary from its left and right context",
       task(kSegmentation)},
      {"segmentation-patterns", "003 §4.3 Table 1", "segmentation + the four patterns (intra-context) in 4 heads",
       task(kSegmentation, {inject(kContextPatterns)}), {kInjection}},
      {"segmentation-patterns-all", "003 §4.3 Table 1", "segmentation + the four patterns in every head",
       task(kSegmentation, {inject(kContextPatterns), "model.inject_heads=-1"}), {kInjection}},
      {"pal", "003 §4.3.3", "extractive + a PAL (256 dims, 4 heads) beside every layer; only PALs and the head train "
       "(use with --base)",
       task(kExtractive, {"model.pal_size=256", "model.pal_heads=4", R"(train.train_only=["*.pal.*", "classifier.*"])"})},
      {"pal-patterns", "003 §4.3.3", "pal with the four patterns injected in the PAL heads",
       task(kExtractive, {"model.pal_size=256", "model.pal_heads=4", R"(train.train_only=["*.pal.*", "classifier.*"])",
                          inject(kSummaryPatterns), "model.inject_into=pal"}), {kInjection}},
  };
  // Table 2's ablation (Table 7's for segmentation, intra-context in place of intra-sentence):
  // every combination of matching (m), intra (i) and positional (p = previous and next token),
  // one head per pattern.
  const std::pair<const char*, const char*> combos[] = {
      {"m", "matching_token"}, {"i", "intra_sentence"}, {"p", "previous_token,next_token"},
      {"mi", "matching_token,intra_sentence"}, {"mp", "matching_token,previous_token,next_token"},
      {"ip", "intra_sentence,previous_token,next_token"}};
  for (const auto& [tag, patterns] : combos) {
    out.push_back({std::string("extractive-") + tag, "003 Table 2", std::string("extractive + only ") + patterns,
                   task(kExtractive, {inject(patterns)}), {kInjection}});
    std::string context = patterns;
    if (const auto at = context.find("intra_sentence"); at != std::string::npos)
      context.replace(at, std::string("intra_sentence").size(), "intra_context");
    out.push_back({std::string("segmentation-") + tag, "003 Table 7", std::string("segmentation + only ") + context,
                   task(kSegmentation, {inject(context)}), {kInjection}});
  }
  return out;
}

// Seed 000's prompt designs (§4, Tables 2-5, Table 7's hyperparameters where they apply:
// 100 prefixes, encoder blocks up to 3 and decoder blocks up to 2, top-p 0.95, tau 1.0; Li &
// Liang's MLP of 512). Every prefix recipe trains only the prefixes: use it with --base.
std::vector<std::string> prefixed(std::vector<std::string> more = {}) {
  std::vector<std::string> out = {"model.prefix_length=100", "model.prefix_hidden=512", R"(train.train_only=["prefix.*"])"};
  out.insert(out.end(), more.begin(), more.end());
  return out;
}

std::vector<Recipe> seed000_recipes() {
  const std::string blocks[] = {"model.prefix_encoder_blocks=3", "model.prefix_decoder_blocks=2"};
  const std::string truncsa = "model.sparse_attention=truncsa", softsa = "model.sparse_attention=softsa";
  const std::string lower = "model.sparse_layers=lower";
  return {
      {"finetune", "000 Table 2", "every parameter of the base trains (the reference the prefix designs are measured against)",
       {}},
      {"finetune-truncsa", "000 Table 4", "finetune with TruncSA (top-p 0.95 over key impact) in every encoder layer",
       {truncsa}, {kPrefixAttention}},
      {"finetune-softsa", "000 Table 4", "finetune with SoftSA (Gumbel-softmax, tau 1.0) in every encoder layer", {softsa}, {kPrefixAttention}},
      {"prefix", "000 §3", "prefix-tuning: 100 prefixes per layer for encoder, decoder and cross-attention; the base frozen",
       prefixed()},
      {"prefix-top", "000 Table 3", "prefix-tuning with prefixes only in the top layers (from model.hierarchy_split up)",
       prefixed({"model.prefix_layers=top"})},
      {"prefix-low", "000 Table 3", "prefix-tuning with prefixes only in the lower layers (below model.hierarchy_split)",
       prefixed({"model.prefix_layers=low"})},
      {"uniblock", "000 §4.1 Table 2", "prefix + blocking in every layer: 3 input segments, 2 output segments, one prefix group each",
       prefixed({blocks[0], blocks[1]}), {kPrefixAttention}},
      {"hierblock", "000 §4.1 Table 2", "uniblock in the lower layers, dense prefixes in the top layers",
       prefixed({blocks[0], blocks[1], "model.prefix_blocking=lower"}), {kPrefixAttention}},
      {"truncsa", "000 §4.2 Table 4", "prefix + TruncSA (top-p 0.95 over key impact, Eq. 2) in every encoder layer",
       prefixed({truncsa}), {kPrefixAttention}},
      {"softsa", "000 §4.2 Table 4", "prefix + SoftSA (Gumbel-softmax, tau 1.0, Eq. 3) in every encoder layer",
       prefixed({softsa}), {kPrefixAttention}},
      {"htruncsa", "000 §4.2 Table 4", "prefix + TruncSA in the lower encoder layers, dense above", prefixed({truncsa, lower}), {kPrefixAttention}},
      {"hsoftsa", "000 §4.2 Table 4", "prefix + SoftSA in the lower encoder layers, dense above", prefixed({softsa, lower}), {kPrefixAttention}},
      {"hierblock-softsa", "000 §4.2 Table 5", "hierblock + SoftSA in the lower encoder layers",
       prefixed({blocks[0], blocks[1], "model.prefix_blocking=lower", softsa, lower}), {kPrefixAttention}},
  };
}

std::vector<Recipe> make_recipes() {
  auto ablation = [](const char* flag) {
    return encoder(std::string(R"({"kind": "hibrids", "max_path": 4, "max_level": 2, ")") + flag + "\": false}");
  };
  return {
      {"longformer", "001 §5.2", "the base: sliding-window attention (32 each side) plus a global first token",
       {encoder()}},
      {"sectok", "001 §5.2", "base + a [SEC] token at the start of every section", {encoder(), "data.section_tokens=sectok"}},
      {"lvlsectok", "001 §5.2", "base + level tokens [SEC-L1], [SEC-L2], ... at section starts",
       on_lvlsectok({encoder()})},
      {"tokbias", "001 §5.2", "lvlsectok + T5 relative-position buckets as a learned bias per head",
       on_lvlsectok({encoder(R"({"kind": "t5_buckets", "buckets": 32, "max_distance": 128})")})},
      {"secbias", "001 §5.2", "lvlsectok + section-distance buckets as a learned bias per head",
       on_lvlsectok({encoder(R"({"kind": "section_distance", "buckets": 16, "max_distance": 32})")})},
      {"hibrids-enc", "001 §3.2 Eq. 1-2", "lvlsectok + HIBRIDS biases (PathLen × LvlDiff) in encoder self-attention",
       on_lvlsectok({encoder(kHibrids)})},
      {"hierenc", "001 §5.2", "lvlsectok + HIERENC: 2 Transformer layers over mean-pooled section vectors, which the "
       "decoder reads after the tokens (Rohde et al. 2021)",
       on_lvlsectok({encoder(), "model.section_encoder_layers=2"})},
      {"multitask", "001 §5.2", "lvlsectok + MULTITASK: a bilinear classifier predicts each section pair's HIBRIDS_S "
       "relation from mean-pooled section vectors, its loss added to the summary's with equal weight",
       on_lvlsectok({encoder(), "model.section_relation_head=true"})},
      {"hierenc-hibrids", "001 Table 5", "hierenc + HIBRIDS biases (PathLen × LvlDiff) in the section layers' "
       "attention", on_lvlsectok({encoder(), "model.section_encoder_layers=2",
                                  std::string("model.section_encoder_hibrids=") + kHibrids})},
      {"hibrids-s-enc", "001 §3.2", "lvlsectok + HIBRIDS_S (selected section relations) in encoder self-attention",
       on_lvlsectok({encoder(kSelected)})},
      {"hibrids-dec", "001 §3.2 Eq. 3", "lvlsectok + HIBRIDS on the last decoder layer's cross-attention",
       on_lvlsectok({encoder(), std::string("model.decoder_hibrids=") + kHibrids})},
      {"hibrids-enc-dec", "001 §7 (not reported)", "lvlsectok + HIBRIDS on the encoder and on the last decoder "
       "layer's cross-attention", on_lvlsectok({encoder(kHibrids), std::string("model.decoder_hibrids=") + kHibrids})},
      {"hibrids-s-dec", "001 §3.2", "lvlsectok + HIBRIDS_S on the last decoder layer's cross-attention",
       on_lvlsectok({encoder(), std::string("model.decoder_hibrids=") + kSelected})},
      {"hibrids-enc-no-level", "001 Table 4", "hibrids-enc without level difference (PathLen only)",
       on_lvlsectok({ablation("level")})},
      {"hibrids-enc-no-path", "001 Table 4", "hibrids-enc without path length (LvlDiff only)",
       on_lvlsectok({ablation("path")})},
      {"hibrids-enc-symmetric", "001 Table 4", "hibrids-enc with |PathLen| (no asymmetry)",
       on_lvlsectok({ablation("asymmetric")})},
  };
}

}  // namespace

const std::vector<Recipe>& all_recipes() {
  static const std::vector<Recipe> all = [] {
    std::vector<Recipe> out = make_recipes();
    for (Recipe& recipe : seed003_recipes()) out.push_back(std::move(recipe));
    for (Recipe& recipe : seed000_recipes()) out.push_back(std::move(recipe));
    return out;
  }();
  return all;
}

const Recipe& find_recipe(std::string_view name) {
  std::vector<std::string> names;
  for (const Recipe& recipe : all_recipes()) {
    if (recipe.name == name) return recipe;
    names.push_back(recipe.name);
  }
  const auto suggestion = closest_match(name, names);
  throw Error("unknown recipe '" + std::string(name) + "'" +
              (suggestion ? ", did you mean '" + *suggestion + "'?" : std::string()) +
              " (`strata recipes list` names them)");
}

}  // namespace strata::recipes
