#include <gtest/gtest.h>

#include "strata/eval/baselines.h"

namespace strata {
namespace {

Document manual() {
  DocumentBuilder b("tool(1)");
  b.open_section("SYNOPSIS", 1);
  b.add_paragraph("tool [options] file");
  b.open_section("DESCRIPTION", 1);
  b.add_paragraph("Tool copies files between hosts. It keeps permissions.");
  b.add_paragraph("Errors are reported on stderr.");
  return b.finish();
}

TEST(LeadSummary, TakesTheFirstSentencesOnePerLine) {
  const Document d = manual();
  EXPECT_EQ(lead_summary(d, 1), "tool [options] file");
  EXPECT_EQ(lead_summary(d, 3), "tool [options] file\nTool copies files between hosts.\nIt keeps permissions.");
  EXPECT_EQ(lead_summary(d, 100), lead_summary(d, 4));  // all four sentences
}

TEST(LeadSummary, StartsAtANamedSectionOrFallsBackToTheWholeDocument) {
  const Document d = manual();
  EXPECT_EQ(lead_summary(d, 1, "description"), "Tool copies files between hosts.");
  EXPECT_EQ(lead_summary(d, 1, "EXAMPLES"), "tool [options] file");
  EXPECT_EQ(lead_summary(DocumentBuilder("empty").finish(), 2), "");
}

TEST(OracleSentence, PicksTheSentenceClosestToTheReference) {
  const Document d = manual();
  EXPECT_EQ(oracle_sentence(d, "copy files between hosts"), "Tool copies files between hosts.");
  EXPECT_EQ(oracle_sentence(d, "report errors"), "Errors are reported on stderr.");  // stemming
  // No overlap anywhere: every sentence ties at 0 and the earliest wins.
  EXPECT_EQ(oracle_sentence(d, "zebra"), "tool [options] file");
  EXPECT_EQ(oracle_sentence(DocumentBuilder("empty").finish(), "anything"), "");
}

}  // namespace
}  // namespace strata
