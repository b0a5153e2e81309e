// A choice's text while it is written: stop strings end it, and only text that can no longer
// change is streamed.
#include <gtest/gtest.h>

#include "strata/serve/streamed_text.h"

namespace strata::serve {
namespace {

TEST(StreamedText, StreamsEverythingWithoutStopStrings) {
  StreamedText text;
  text.update("hel");
  EXPECT_EQ(text.take_settled(), "hel");
  text.update("hello");
  EXPECT_EQ(text.take_settled(), "lo");
  EXPECT_EQ(text.take_settled(), "");
  text.finish("length");
  EXPECT_TRUE(text.finished());
  EXPECT_EQ(text.finish_reason(), "length");
  EXPECT_EQ(text.text(), "hello");
}

TEST(StreamedText, AStopStringCutsTheTextAndIsNeverSent) {
  StreamedText text({"END", "\n\n"});
  text.update("ab E");
  EXPECT_EQ(text.take_settled(), "ab ");  // "E" may begin "END"
  text.update("ab EN");
  EXPECT_EQ(text.take_settled(), "");
  text.update("ab ENDING");
  EXPECT_TRUE(text.finished());
  EXPECT_EQ(text.finish_reason(), "stop");
  EXPECT_EQ(text.text(), "ab ");
  EXPECT_EQ(text.take_settled(), "");
  text.update("ignored once finished");
  EXPECT_EQ(text.text(), "ab ");
}

TEST(StreamedText, TheEarliestStopStringWins) {
  StreamedText text({"c", "b"});
  text.update("xabc");
  EXPECT_EQ(text.text(), "xa");
}

TEST(StreamedText, HeldBackTextIsReleasedWhenItStopsLookingLikeAStop) {
  StreamedText text({"END"});
  text.update("E");
  EXPECT_EQ(text.take_settled(), "");
  text.update("Ex");
  EXPECT_EQ(text.take_settled(), "Ex");
}

TEST(StreamedText, IncompleteUtf8IsHeldBack) {
  StreamedText text;
  text.update("caf\xC3");  // the first byte of é
  EXPECT_EQ(text.take_settled(), "caf");
  text.update("caf\xEF\xBF\xBD");  // a decoder's U+FFFD for the partial character
  EXPECT_EQ(text.take_settled(), "");
  text.update("caf\xC3\xA9!");
  EXPECT_EQ(text.take_settled(), "\xC3\xA9!");
}

TEST(StreamedText, FinishingReleasesTheHeldTail) {
  StreamedText text({"END"});
  text.update("abcEN");
  EXPECT_EQ(text.take_settled(), "abc");
  text.finish("stop");  // eos before the stop string completed
  EXPECT_EQ(text.take_settled(), "EN");
  EXPECT_EQ(text.finish_reason(), "stop");
}

}  // namespace
}  // namespace strata::serve
