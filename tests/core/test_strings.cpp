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
