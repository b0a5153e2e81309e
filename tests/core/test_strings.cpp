#include <gtest/gtest.h>

#include "strata/core/strings.h"

namespace strata {
namespace {

using Parts = std::vector<std::string_view>;

TEST(Split, PartsBetweenSeparators) {
  EXPECT_EQ(split("a,b,,c", ','), (Parts{"a", "b", "", "c"}));
  EXPECT_EQ(split("a,", ','), (Parts{"a", ""}));
  EXPECT_EQ(split("abc", ','), (Parts{"abc"}));
  EXPECT_TRUE(split("", ',').empty());
}

TEST(SplitList, TrimmedNonEmptyItemsThatOutliveTheirText) {
  using Items = std::vector<std::string>;
  EXPECT_EQ(split_list(" a, ,b ,"), (Items{"a", "b"}));
  EXPECT_EQ(split_list("x|y", '|'), (Items{"x", "y"}));
  EXPECT_TRUE(split_list(" , ").empty());
  // Read from a temporary longer than a short-string buffer, as a config value is: the items are
  // copies, valid after the text is gone.
  const Items tasks = split_list(std::string("section,priority,tag-role,tag-implemented-in,match"));
  EXPECT_EQ(tasks, (Items{"section", "priority", "tag-role", "tag-implemented-in", "match"}));
}

TEST(ParseInt64, WholeTextOnlyAsStollReadsIt) {
  EXPECT_EQ(parse_int64("42"), 42);
  EXPECT_EQ(parse_int64("-7"), -7);
  EXPECT_EQ(parse_int64("+7"), 7);
  EXPECT_EQ(parse_int64("  5"), 5);  // leading whitespace, as stoll
  EXPECT_EQ(parse_int64("9223372036854775807"), INT64_MAX);
  for (const char* bad : {"", "  ", "3x", "3 ", "1.5", "+-1", "0x10", "9223372036854775808", "-", "+"})
    EXPECT_EQ(parse_int64(bad), std::nullopt) << '"' << bad << '"';
}

TEST(SplitWords, RunsBetweenAnyWhitespace) {
  EXPECT_EQ(split_words(" a\tbb\n\nc \r\f\vd "), (std::vector<std::string_view>{"a", "bb", "c", "d"}));
  EXPECT_EQ(split_words("one"), (std::vector<std::string_view>{"one"}));
  EXPECT_TRUE(split_words("").empty());
  EXPECT_TRUE(split_words(" \t\n").empty());
}

TEST(SplitLines, DropsCarriageReturns) {
  EXPECT_EQ(split_lines("a\r\nb\n"), (Parts{"a", "b", ""}));
}

}  // namespace
}  // namespace strata
