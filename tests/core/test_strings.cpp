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

TEST(SplitLines, DropsCarriageReturns) {
  EXPECT_EQ(split_lines("a\r\nb\n"), (Parts{"a", "b", ""}));
}

}  // namespace
}  // namespace strata
