#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "random_calls.h"
#include "strata/attn/spec.h"
#include "support/expect.h"

namespace strata::attn {
namespace {

using nlohmann::json;
using test_support::error_of;

const Mask kSentence = Mask::of(MaskKind::SameSentence);
const Mask kSection = Mask::of(MaskKind::SameSection);
const Mask kToken = Mask::of(MaskKind::MatchingToken);
const Mask kPrefix = Mask::of(MaskKind::PrefixBlock);

TEST(Spec, OperatorsBuildFlatExpressions) {
  const Mask m = Mask::causal() && kSentence && kSection;
  EXPECT_EQ(m.kind, MaskKind::And);
  ASSERT_EQ(m.operands.size(), 3u);
  EXPECT_EQ(m.operands[2], kSection);
  const Mask n = (Mask::causal() || kSentence) && !kSection;
  ASSERT_EQ(n.operands.size(), 2u);
  EXPECT_EQ(n.operands[0].kind, MaskKind::Or);
  EXPECT_EQ(n.operands[1].kind, MaskKind::Not);
  EXPECT_EQ(Mask::window(3, 4).left, 3);
  EXPECT_EQ(Mask::window(3, 4).right, 4);
  EXPECT_EQ(Mask::global(2).count, 2);
  EXPECT_NE(error_of([] { Mask::of(MaskKind::Window); }).find("Mask::window"), std::string::npos);
}

TEST(Spec, ParsesTheDocumentedSyntax) {
  EXPECT_EQ(parse_mask("window(64,64) | global(1)"), Mask::window(64, 64) || Mask::global(1));
  EXPECT_EQ(parse_mask("same_section & !causal"), kSection && !Mask::causal());
  EXPECT_EQ(parse_mask("prefix_block & (same_sentence | matching_token)"),
            kPrefix && (kSentence || kToken));
  // & binds tighter than |, ! tighter than both; whitespace is free.
  EXPECT_EQ(parse_mask("all|causal&same_section"), Mask::all() || (Mask::causal() && kSection));
  EXPECT_EQ(parse_mask(" ! causal & same_section "), !Mask::causal() && kSection);
  EXPECT_EQ(parse_mask("!(causal | all)"), !(Mask::causal() || Mask::all()));
  EXPECT_EQ(parse_mask("window( 2 , 0 )"), Mask::window(2, 0));
  EXPECT_EQ(parse_mask("blocks(64,1) & causal"), Mask::blocks(64, 1) && Mask::causal());
  EXPECT_EQ(to_string(Mask::blocks(64, 1) && Mask::causal()), "blocks(64,1) & causal");
  EXPECT_EQ(parse_mask("same_document"), Mask::of(MaskKind::SameDocument));
  EXPECT_EQ(parse_mask("causal & (window(128,0) | query_segment(2))"),
            Mask::causal() && (Mask::window(128, 0) || Mask::query_segment(2)));
  EXPECT_EQ(to_string(Mask::window(8, 0) || Mask::query_segment(2)), "window(8,0) | query_segment(2)");
  EXPECT_EQ(parse_mask("same_paragraph & same_segment").operands[1],
            Mask::of(MaskKind::SameSegment));
}

TEST(Spec, PrintingRoundTrips) {
  EXPECT_EQ(to_string(kPrefix && (kSentence || kToken)),
            "prefix_block & (same_sentence | matching_token)");
  EXPECT_EQ(to_string(!(Mask::causal() && kSection)), "!(causal & same_section)");
  EXPECT_EQ(to_string(Mask::window(64, 0) || (Mask::global(1) && kSection)),
            "window(64,0) | global(1) & same_section");
  // Nesting that the operators would flatten stays nested through text.
  Mask nested;
  nested.kind = MaskKind::And;
  nested.operands = {Mask::causal() && kSection, !!kToken};
  EXPECT_EQ(to_string(nested), "(causal & same_section) & !!matching_token");
  EXPECT_EQ(parse_mask(to_string(nested)), nested);
  std::mt19937 rng(2);
  for (int trial = 0; trial < 300; ++trial) {
    const Mask m = test::random_mask(rng, 4);
    ASSERT_EQ(parse_mask(to_string(m)), m) << to_string(m);
  }
}

TEST(Spec, SyntaxErrorsNameThePositionAndTheKnownNames) {
  const std::string known =
      " (masks: all, causal, window(L,R), global(N), blocks(W,B), same_sentence, "
      "same_paragraph, same_section, same_segment, same_document, "
      "matching_token, prefix_block; operators: & | ! and parentheses)";
  EXPECT_EQ(error_of([] { parse_mask("causal & same_sentense"); }),
            "attention mask \"causal & same_sentense\" at position 10: unknown mask "
            "'same_sentense', did you mean 'same_sentence'?" +
                known);
  EXPECT_EQ(error_of([] { parse_mask("window(64 | causal"); }),
            "attention mask \"window(64 | causal\" at position 11: expected ',', got '|'" + known);
  EXPECT_EQ(error_of([] { parse_mask("causal &"); }),
            "attention mask \"causal &\" at position 9: expected a mask, '!' or '(', got the end" +
                known);
  EXPECT_EQ(error_of([] { parse_mask("causal(1)"); }),
            "attention mask \"causal(1)\" at position 7: 'causal' takes no parameters" + known);
  EXPECT_EQ(error_of([] { parse_mask("(all"); }),
            "attention mask \"(all\" at position 5: expected ')', got the end" + known);
  EXPECT_EQ(
      error_of([] { parse_mask("all all"); }),
      "attention mask \"all all\" at position 5: expected '&', '|' or the end, got 'a'" + known);
  EXPECT_EQ(error_of([] { parse_mask("global(-1)"); }),
            "attention mask \"global(-1)\" at position 8: expected a non-negative integer" + known);
  EXPECT_EQ(error_of([] { parse_mask("xyzzy"); }),
            "attention mask \"xyzzy\" at position 1: unknown mask 'xyzzy'" + known);
}

TEST(Spec, RelationCountsAndPlainness) {
  EXPECT_EQ(relation_count({}), 0);
  EXPECT_EQ(relation_count({RelationKind::Hibrids, 4, 2}), 45);
  EXPECT_EQ(relation_count({RelationKind::T5Buckets}), 32);
  EXPECT_EQ(relation_count({.kind = RelationKind::SectionDistance, .buckets = 16, .max_distance = 64}), 16);
  EXPECT_EQ(relation_count({.kind = RelationKind::HibridsSelected}), kSelectedRelations);
  // Seed 001 Table 4's ablations: 5 level values only, 9 path values only, |PathLen| 0..4.
  EXPECT_EQ(relation_count({.kind = RelationKind::Hibrids, .path = false}), 5);
  EXPECT_EQ(relation_count({.kind = RelationKind::Hibrids, .level = false}), 9);
  EXPECT_EQ(relation_count({.kind = RelationKind::Hibrids, .asymmetric = false}), 25);
  EXPECT_EQ(relation_name(RelationKind::SectionDistance), "section_distance");
  LayerSpec spec;
  EXPECT_TRUE(spec.is_plain());
  spec.heads = {HeadSpec{}, HeadSpec{}};
  EXPECT_TRUE(spec.is_plain());
  spec.heads[1].normaliser.kind = NormaliserKind::Gumbel;
  EXPECT_FALSE(spec.is_plain());
  spec.heads[1] = HeadSpec{};
  spec.heads[0].fixed = FixedPattern::NextToken;
  EXPECT_FALSE(spec.is_plain());
  spec.heads[0].fixed = FixedPattern::None;
  spec.heads[0].mask = Mask::causal();
  EXPECT_FALSE(spec.is_plain());
  EXPECT_FALSE((LayerSpec{{HeadSpec{}}, Relation{RelationKind::T5Buckets}, false}.is_plain()));
  EXPECT_FALSE((LayerSpec{{HeadSpec{}}, {}, true}.is_plain()));
  EXPECT_EQ(LayerSpec{}.head(5), HeadSpec{});  // one spec serves every head
}

// Seed 001 Figure 2's tree: root(0) ─ §1(1) ─ §1.1(2), §1.2(3); root ─ §2(4) ─ §2.1(5) ─
// §2.1.1(6). SectionPair from x to y as doc/layout.h computes them.
SectionPair figure2_pair(int x, int y) {
  SectionTree tree;
  tree.parent = {-1, 0, 1, 1, 0, 4, 5};
  tree.depth = {0, 1, 2, 2, 1, 2, 3};
  return {tree.path_len(x, y), tree.lvl_diff(x, y), tree.depth[x], y - x};
}

TEST(Spec, SelectedRelationsOfFigure2) {
  using R = SelectedRelation;
  const std::vector<std::tuple<int, int, R>> cases = {
      {2, 2, R::Self},           {2, 1, R::Parent},           {1, 2, R::Child},
      {6, 4, R::Ancestor},       {4, 6, R::Descendant},       {0, 6, R::Descendant},
      {3, 2, R::PrecedingSibling}, {2, 3, R::FollowingSibling}, {4, 1, R::PrecedingSibling},
      {4, 3, R::PreviousInText}, {3, 4, R::NextInText},       {6, 0, R::Ancestor},
      {2, 4, R::Other},          {5, 3, R::Other}};
  for (const auto& [x, y, want] : cases)
    EXPECT_EQ(selected_relation(figure2_pair(x, y)), want)
        << x << " -> " << y << ": got " << selected_relation_name(selected_relation(figure2_pair(x, y)));
  // Same top-level section, none of the closer relations: a node and its sibling's child.
  SectionTree deep;
  deep.parent = {-1, 0, 1, 2, 1, 4};
  deep.depth = {0, 1, 2, 3, 2, 3};
  const SectionPair cousin{deep.path_len(3, 5), deep.lvl_diff(3, 5), deep.depth[3], 2};
  EXPECT_EQ(selected_relation(cousin), R::SameTopLevel);
}

TEST(Spec, HibridsIdsAndTheirAblations) {
  const Relation full{.kind = RelationKind::Hibrids, .max_path = 2, .max_level = 1};
  // (PathLen, LvlDiff) = (-1, -1) from §1.1 to §1: (−1 + 2) * 3 + (−1 + 1) = 3.
  EXPECT_EQ(tree_relation_id(full, figure2_pair(2, 1)), 3);
  // §2.1.1 to §1: PathLen -4 clamps to -2, LvlDiff -2 clamps to -1: id 0, counted as clamped.
  EXPECT_EQ(tree_relation_id(full, figure2_pair(6, 1)), 0);
  EXPECT_TRUE(tree_relation_clamped(full, figure2_pair(6, 1)));
  EXPECT_FALSE(tree_relation_clamped(full, figure2_pair(2, 1)));
  Relation no_level = full;
  no_level.level = false;
  EXPECT_EQ(tree_relation_id(no_level, figure2_pair(2, 1)), 1);  // PathLen -1 + 2
  Relation no_path = full;
  no_path.path = false;
  EXPECT_EQ(tree_relation_id(no_path, figure2_pair(2, 1)), 0);  // LvlDiff -1 + 1
  EXPECT_TRUE(tree_relation_clamped(full, figure2_pair(3, 5)));  // PathLen 4, LvlDiff 0
  EXPECT_FALSE(tree_relation_clamped(no_path, figure2_pair(3, 5)));
  Relation symmetric = full;
  symmetric.asymmetric = false;
  EXPECT_EQ(tree_relation_id(symmetric, figure2_pair(2, 1)),
            tree_relation_id(symmetric, figure2_pair(1, 2)) - 2);  // |1| * 3 + (LvlDiff ± 1 + 1)
  for (const Relation& r : {full, no_level, no_path, symmetric})
    for (int x = 0; x < 7; ++x)
      for (int y = 0; y < 7; ++y) {
        const std::int32_t id = tree_relation_id(r, figure2_pair(x, y));
        EXPECT_GE(id, 0);
        EXPECT_LT(id, relation_count(r));
      }
}

TEST(Spec, ValidateNamesTheBadParameter) {
  LayerSpec spec;
  spec.heads[0].mask = Mask::causal() && Mask::window(-1, 2);
  EXPECT_EQ(error_of([&] { validate(spec); }),
            "attention mask window(-1,2): window sizes must be >= 0");
  spec.heads[0].mask = Mask::blocks(0, 1);
  EXPECT_EQ(error_of([&] { validate(spec); }),
            "attention mask blocks(0,1): blocks(W,B) needs a block length W > 0 and B >= 0 blocks before");
  spec.heads[0].mask = Mask::query_segment(-1);
  EXPECT_EQ(error_of([&] { validate(spec); }), "attention mask query_segment(-1): segment ids are >= 0");
  spec.heads[0] = HeadSpec{};
  spec.heads[0].mask.kind = MaskKind::Or;
  spec.heads[0].mask.operands = {Mask::all()};
  EXPECT_EQ(error_of([&] { validate(spec); }),
            "attention mask: Or needs two or more operands, got 1");
  spec.heads[0] = HeadSpec{};
  spec.heads[0].normaliser = {NormaliserKind::Gumbel, 0.0};
  EXPECT_EQ(error_of([&] { validate(spec); }),
            "attention spec: gumbel 'tau' must be > 0, got 0.000000");
  spec.heads[0] = HeadSpec{};
  spec.bias = {.kind = RelationKind::T5Buckets, .buckets = 6, .max_distance = 1};
  EXPECT_EQ(error_of([&] { validate(spec); }),
            "attention spec: t5_buckets needs an even 'buckets' >= 4 and 'max_distance' > "
            "buckets / 4, got buckets 6, max_distance 1");
  spec.bias = {};
  spec.heads.clear();
  EXPECT_EQ(error_of([&] { validate(spec); }),
            "attention spec: 'heads' needs at least one head spec");
}

TEST(Spec, ReadsTheDocumentedJson) {
  const LayerSpec spec = layer_spec_from_json(json::parse(R"j({
    "heads": [{"mask": "window(64,64) | global(1)", "fixed": "previous_token",
               "normaliser": {"kind": "gumbel", "tau": 0.5}},
              {"normaliser": {"kind": "top_p", "p": 0.9}}],
    "bias": {"kind": "hibrids", "max_path": 3, "max_level": 1}, "dense_bias": true})j"));
  ASSERT_EQ(spec.heads.size(), 2u);
  EXPECT_EQ(spec.heads[0].mask, Mask::window(64, 64) || Mask::global(1));
  EXPECT_EQ(spec.heads[0].fixed, FixedPattern::PreviousToken);
  EXPECT_EQ(spec.heads[0].normaliser, (Normaliser{NormaliserKind::Gumbel, 0.5, 1.0}));
  EXPECT_EQ(spec.heads[1].mask, Mask::all());
  EXPECT_EQ(spec.heads[1].normaliser, (Normaliser{NormaliserKind::TopP, 1.0, 0.9}));
  EXPECT_EQ(spec.bias, (Relation{RelationKind::Hibrids, 3, 1}));
  EXPECT_TRUE(spec.dense_bias);
  EXPECT_EQ(layer_spec_from_json(json::object()), LayerSpec{});
}

TEST(Spec, JsonRoundTrips) {
  std::mt19937 rng(12);
  for (int trial = 0; trial < 100; ++trial) {
    LayerSpec spec;
    spec.heads.clear();
    for (std::int64_t h = 0, n = test::uniform(rng, 1, 3); h < n; ++h) {
      HeadSpec head;
      head.mask = test::random_mask(rng, 3);
      head.fixed = static_cast<FixedPattern>(test::uniform(rng, 0, 2));
      head.normaliser.kind = static_cast<NormaliserKind>(test::uniform(rng, 0, 2));
      if (test::coin(rng)) head.normaliser.tau = 0.25;
      if (test::coin(rng)) head.normaliser.p = 0.75;
      spec.heads.push_back(head);
    }
    spec.bias.kind = static_cast<RelationKind>(test::uniform(rng, 0, 4));
    if (spec.bias.kind == RelationKind::Hibrids) {
      spec.bias.path = test::coin(rng);
      spec.bias.level = test::coin(rng);
      spec.bias.asymmetric = test::coin(rng);
    }
    if (test::coin(rng)) spec.bias.max_path = 6;
    if (test::coin(rng)) spec.bias.buckets = 16;
    spec.dense_bias = test::coin(rng);
    const json j = to_json(spec);
    ASSERT_EQ(layer_spec_from_json(j), spec) << j.dump();
    ASSERT_EQ(layer_spec_from_json(json::parse(j.dump())), spec);
  }
  LayerSpec spec;
  spec.heads[0].normaliser = {NormaliserKind::Gumbel, 0.5};
  spec.bias = {RelationKind::T5Buckets};
  EXPECT_EQ(to_json(spec).dump(),
            R"({"bias":{"buckets":32,"kind":"t5_buckets","max_distance":128},)"
            R"("heads":[{"mask":"all","normaliser":{"kind":"gumbel","tau":0.5}}]})");
}

TEST(Spec, JsonErrorsNameTheKeyAndTheClosestKnownOne) {
  auto error = [](const char* text) {
    return error_of([&] { layer_spec_from_json(json::parse(text)); });
  };
  EXPECT_EQ(error(R"({"hedas": []})"),
            "attention spec: unknown key 'hedas' (did you mean 'heads'?)");
  EXPECT_EQ(error(R"({"heads": [{"normalizer": {}}]})"),
            "attention spec: unknown key 'heads[0].normalizer' (did you mean 'normaliser'?)");
  EXPECT_EQ(error(R"({"bias": {"kind": "hibrids", "max_paths": 2}})"),
            "attention spec: unknown key 'bias.max_paths' (did you mean 'max_path'?)");
  EXPECT_EQ(error(R"({"zzz": 1})"),
            "attention spec: unknown key 'zzz' (known: heads, bias, dense_bias)");
  EXPECT_EQ(error(R"({"heads": [{"fixed": "previus_token"}]})"),
            "attention spec: 'heads[0].fixed' is 'previus_token', did you mean 'previous_token'? "
            "(known: none, previous_token, next_token)");
  EXPECT_EQ(error(R"({"heads": [{}, {"normaliser": {"kind": "gumbel", "tau": "hot"}}]})"),
            "attention spec: 'heads[1].normaliser.tau' must be a number, got \"hot\"");
  EXPECT_EQ(error(R"({"dense_bias": 1})"),
            "attention spec: 'dense_bias' must be true or false, got 1");
  EXPECT_EQ(error(R"({"heads": {}})"),
            "attention spec: 'heads' must be an array of head specs, got {}");
  EXPECT_EQ(
      error(R"j({"heads": [{"mask": "causal &"}]})j")
          .rfind("attention spec: 'heads[0].mask': attention mask \"causal &\" at position 9: ", 0),
      0u);
  EXPECT_EQ(error(R"({"heads": [{"normaliser": {"kind": "top_p", "p": 2}}]})"),
            "attention spec: top_p 'p' must be in (0, 1], got 2.000000");
  EXPECT_EQ(error("[]"), "attention spec: the spec must be a JSON object");
}

TEST(Spec, PrintsOneLinePerHead) {
  LayerSpec spec;
  spec.heads = std::vector<HeadSpec>(3);
  spec.heads[0].mask = Mask::window(4, 4) || Mask::global(1);
  spec.heads[1].fixed = FixedPattern::PreviousToken;
  spec.heads[2].mask = kSection && !Mask::causal();
  spec.heads[2].normaliser = {NormaliserKind::TopP, 1.0, 0.9};
  spec.bias = {RelationKind::Hibrids, 4, 2};
  spec.dense_bias = true;
  EXPECT_EQ(to_string(spec),
            "head 0: window(4,4) | global(1)\n"
            "head 1: fixed previous_token\n"
            "head 2: same_section & !causal, top_p(p=0.9)\n"
            "bias: hibrids(max_path=4, max_level=2), dense\n");
  LayerSpec one;
  one.heads[0].normaliser = {NormaliserKind::Gumbel, 0.5};
  one.bias = {.kind = RelationKind::SectionDistance, .buckets = 8, .max_distance = 16};
  EXPECT_EQ(
      to_string(one),
      "every head: all, gumbel(tau=0.5)\nbias: section_distance(buckets=8, max_distance=16)\n");
}

TEST(MaskExpression, NestingPastTheLimitIsAnErrorNotAStackOverflow) {
  // 64 levels parse (found by the attention_spec fuzz target: 100,000 overflowed the stack).
  const std::string ok = std::string(64, '(') + "causal" + std::string(64, ')');
  EXPECT_EQ(parse_mask(ok), Mask::causal());
  EXPECT_NO_THROW(parse_mask(std::string(64, '!') + "causal"));
  for (const std::string& deep : {std::string(100000, '(') + "causal", std::string(65, '!') + "causal"}) {
    try {
      parse_mask(deep);
      FAIL() << "a mask nested " << deep.size() << " deep was parsed";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("nested deeper than 64 levels"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace strata::attn
