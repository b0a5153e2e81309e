#include "strata/recipes/recipe.h"

#include "strata/core/edit_distance.h"
#include "strata/core/error.h"

namespace strata {

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

const char* kHibrids = R"({"kind": "hibrids", "max_path": 4, "max_level": 2})";
const char* kSelected = R"({"kind": "hibrids_selected"})";

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
      {"hibrids-s-enc", "001 §3.2", "lvlsectok + HIBRIDS_S (selected section relations) in encoder self-attention",
       on_lvlsectok({encoder(kSelected)})},
      {"hibrids-dec", "001 §3.2 Eq. 3", "lvlsectok + HIBRIDS on the last decoder layer's cross-attention",
       on_lvlsectok({encoder(), std::string("model.decoder_hibrids=") + kHibrids})},
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

const std::vector<Recipe>& recipes() {
  static const std::vector<Recipe> all = make_recipes();
  return all;
}

const Recipe& find_recipe(std::string_view name) {
  std::vector<std::string> names;
  for (const Recipe& recipe : recipes()) {
    if (recipe.name == name) return recipe;
    names.push_back(recipe.name);
  }
  const auto suggestion = closest_match(name, names);
  throw Error("unknown recipe '" + std::string(name) + "'" +
              (suggestion ? ", did you mean '" + *suggestion + "'?" : std::string()) +
              " (`strata recipes list` names them)");
}

}  // namespace strata
