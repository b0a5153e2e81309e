#include <gtest/gtest.h>

#include <zlib.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/jsonl.h"
#include "strata/core/utf8.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

fs::path temp_path(const std::string& name) {
  return fs::temp_directory_path() / ("strata_core_" + std::to_string(::getpid()) + "_" + name);
}

TEST(AtomicFile, UncommittedWriteLeavesTheOldFileUntouched) {
  const fs::path path = temp_path("atomic.txt");
  write_file_atomic(path, "good");
  {
    AtomicFile file(path);
    file.stream() << "half-written";
    // destroyed without commit(), as when an error interrupts a writer
  }
  EXPECT_EQ(read_file(path), "good");
  for (const auto& entry : fs::directory_iterator(path.parent_path()))
    EXPECT_EQ(entry.path().string().find(path.string() + ".tmp"), std::string::npos);
  fs::remove(path);
}

TEST(ReadFile, MissingFileNamesThePath) {
  try {
    read_file("/nonexistent/strata.txt");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/strata.txt"), std::string::npos);
  }
}

TEST(ReadMaybeGzip, InflatesGzipAndPassesPlainThrough) {
  const fs::path gz = temp_path("page.gz");
  gzFile f = gzopen(gz.c_str(), "wb");
  gzputs(f, ".TH LS 1\nhello\n");
  gzclose(f);
  EXPECT_EQ(read_maybe_gzip(gz), ".TH LS 1\nhello\n");
  write_file_atomic(gz, "plain");
  EXPECT_EQ(read_maybe_gzip(gz), "plain");
  write_file_atomic(gz, std::string("\x1f\x8b\x08\x00garbage", 12));
  EXPECT_THROW(read_maybe_gzip(gz), Error);
  fs::remove(gz);
}

TEST(Utf8, ReplacesAndCountsInvalidBytes) {
  std::size_t replaced = 0;
  EXPECT_EQ(sanitize_utf8("caf\xC3\xA9", &replaced), "caf\xC3\xA9");
  EXPECT_EQ(replaced, 0u);
  EXPECT_EQ(sanitize_utf8("a\xFF" "b\xC3", &replaced), "a\xEF\xBF\xBD" "b\xEF\xBF\xBD");
  EXPECT_EQ(replaced, 2u);
  EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));      // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));  // surrogate
  EXPECT_TRUE(is_valid_utf8("\xF0\x9F\x98\x80"));
}

TEST(JsonlReader, ErrorsNameFileLineAndField) {
  const fs::path path = temp_path("pairs.jsonl");
  write_file_atomic(path, "{\"a\": \"x\"}\n\n{\"a\": 3}\n{oops\n");
  JsonlReader reader(path);
  nlohmann::json object;
  ASSERT_TRUE(reader.next(object));
  EXPECT_EQ(reader.string_field(object, "a"), "x");
  ASSERT_TRUE(reader.next(object));
  EXPECT_EQ(reader.line(), 3u);  // the blank line is skipped but counted
  try {
    reader.string_field(object, "a");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("pairs.jsonl:3: field 'a': expected a string"), std::string::npos) << e.what();
  }
  try {
    reader.next(object);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("pairs.jsonl:4: malformed JSON"), std::string::npos) << e.what();
  }
  fs::remove(path);
}

TEST(JsonlReader, LinesAcrossManyBuffersAndWithoutAFinalNewlineReadWhole) {
  const fs::path path = temp_path("long.jsonl");
  const std::string long_text(300000, 'x');  // several of the reader's 64 KiB buffers
  std::string exact(65535 - 10, 'y');         // the line ends where a buffer does
  write_file_atomic(path, "{\"a\": \"" + long_text + "\"}\r\n\n{\"b\": \"" + exact + "\"}\n{\"c\": 1e999}");
  JsonlReader reader(path);
  nlohmann::json object;
  ASSERT_TRUE(reader.next(object));
  EXPECT_EQ(object["a"].get<std::string>(), long_text);
  ASSERT_TRUE(reader.next(object));
  EXPECT_EQ(object["b"].get<std::string>(), exact);
  // A number past double's range is malformed input like any other, not a crash.
  try {
    reader.next(object);
    FAIL() << "1e999 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("long.jsonl:4: malformed JSON"), std::string::npos) << e.what();
  }
  fs::remove(path);
}

TEST(JsonlReader, ALineOverTheLimitIsRefusedWithoutReadingIt) {
  const fs::path path = temp_path("huge.jsonl");
  write_file_atomic(path, "{\"a\": 1}\n{\"a\": \"" + std::string(5000, 'z') + "\"}\n");
  JsonlReader reader(path, 1000);
  nlohmann::json object;
  ASSERT_TRUE(reader.next(object));
  try {
    reader.next(object);
    FAIL() << "an overlong line was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("huge.jsonl:2: the line is longer than 1000 bytes"), std::string::npos)
        << e.what();
  }
  fs::remove(path);
}

}  // namespace
}  // namespace strata
