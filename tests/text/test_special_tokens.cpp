#include <gtest/gtest.h>

#include <set>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/text/tokenizer.h"
#include "strata/text/tokenizer_sidecar.h"
#include "text_test_util.h"

namespace strata {
namespace {

TEST(SpecialTokens, AllListsNamedTokensThenStructuralSkippingEmpty) {
  SpecialTokens s;
  s.sep.clear();
  s.structural = {"[SEC]", "[L-]"};
  EXPECT_EQ(s.all(),
            (std::vector<std::string>{"<s>", "</s>", "<pad>", "<unk>", "<mask>", "[SEC]", "[L-]"}));
}

TEST(SpecialTokens, DefaultStructuralMarkers) {
  EXPECT_EQ(SpecialTokens::default_structural(2),
            (std::vector<std::string>{"[SEC]", "[SEC-L1]", "[SEC-L2]", "[L↑]", "[L↓]", "[L-]"}));
  EXPECT_EQ(SpecialTokens::default_structural().size(), 8u);  // four levels by default
  EXPECT_EQ(SpecialTokens::default_structural(0).size(), 4u);
}

TEST(SpecialTokens, DetectFindsPresentTokensAndLevels) {
  const std::set<std::string> vocab{"<s>",      "</s>",     "<pad>",    "[SEC]",
                                    "[SEC-L1]", "[SEC-L2]", "[SEC-L4]", "[L↑]"};
  const SpecialTokens s =
      detect_specials([&](std::string_view p) { return vocab.contains(std::string(p)); });
  EXPECT_EQ(s.bos, "<s>");
  EXPECT_EQ(s.pad, "<pad>");
  EXPECT_EQ(s.unk, "");
  EXPECT_EQ(s.sep, "");
  // Levels stop at the first gap: [SEC-L4] without [SEC-L3] is not a structural marker.
  EXPECT_EQ(s.structural, (std::vector<std::string>{"[SEC]", "[SEC-L1]", "[SEC-L2]", "[L↑]"}));
}

TEST(SpecialTokens, DetectUsesEndOfTextForGpt2) {
  const SpecialTokens s = detect_specials([](std::string_view p) { return p == "<|endoftext|>"; });
  EXPECT_EQ(s.bos, "<|endoftext|>");
  EXPECT_EQ(s.eos, "<|endoftext|>");
  EXPECT_EQ(s.unk, "<|endoftext|>");
  EXPECT_EQ(s.pad, "");
  EXPECT_TRUE(s.structural.empty());
}

TEST(Sidecar, RoundTripsThroughJsonFile) {
  test::TempDir dir("sidecar");
  TokenizerSidecar sidecar{"byte-bpe", "tokenizer.json", {}};
  sidecar.specials.mask.clear();
  sidecar.specials.structural = {"[SEC]", "[L↓]"};
  write_sidecar(dir.path(), sidecar);
  const auto back = read_sidecar(dir.path());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->kind, "byte-bpe");
  EXPECT_EQ(back->model, "tokenizer.json");
  EXPECT_EQ(back->specials.all(), sidecar.specials.all());
  EXPECT_TRUE(sidecar_for(dir / "tokenizer.json").has_value());
  EXPECT_FALSE(sidecar_for(dir / "other.model").has_value());
}

TEST(Sidecar, AbsentIsNulloptAndBadIsAnError) {
  test::TempDir dir("sidecar-bad");
  EXPECT_FALSE(read_sidecar(dir.path()).has_value());
  write_file_atomic(dir / kSidecarName, R"({"format": "strata-tokenizer", "kind": "wordpiece",
                                           "model": "x"})");
  try {
    read_sidecar(dir.path());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("wordpiece"), std::string::npos) << e.what();
  }
  write_file_atomic(dir / kSidecarName, "{not json");
  EXPECT_THROW(read_sidecar(dir.path()), Error);
}

}  // namespace
}  // namespace strata
