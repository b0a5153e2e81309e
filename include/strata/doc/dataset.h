#pragma once
// Summarisation datasets in JSON Lines, in the shapes users export, read as Documents with
// their reference summaries. The shape is detected per line from its fields:
//   {article, highlights}                                        CNN/DailyMail
//   {article, abstract, section_names?}  (strings)               HF scientific_papers
//   {document, summary}                                          XSum-like
//   {article_text[], abstract_text[], section_names[], sections[][]}   arXiv/PubMed
//   {id, title, paragraphs[], sections: [{heading, paragraphs[], sections[...]}], summary}
//                                                                strata native
//   {id?, text}                                                  text, kept byte for byte
// docs/formats.md documents each shape, how it maps onto the tree, and the errors.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/core/files.h"
#include "strata/core/jsonl.h"
#include "strata/doc/document.h"

namespace strata {

enum class DatasetShape { CnnDm, ArticleAbstract, DocumentSummary, ArxivPubmed, Native, Text };
const char* shape_name(DatasetShape shape);  // "cnn_dailymail", "document_summary", ..., "text"

class DatasetReader {
 public:
  explicit DatasetReader(std::filesystem::path path);  // "-" reads standard input

  // Next document; false at end. Blank lines are skipped. strata::Error
  // "FILE:LINE: field 'X': ..." on bad lines, "FILE:LINE: expected one of the shapes ..."
  // on a line of no known shape. A document without an id field gets the id "FILE:LINE".
  bool next(Document& document);
  DatasetShape last_shape() const { return shape_; }
  std::size_t line() const { return reader_.line(); }
  std::size_t invalid_utf8_bytes() const { return reader_.invalid_utf8_bytes(); }

 private:
  JsonlReader reader_;
  DatasetShape shape_ = DatasetShape::Native;
};

// The id a dataset line gives its document: `field` when present (a string, or an integer
// written in decimal), else "FILE:LINE". Any other type is an error naming the field.
std::string document_id(const nlohmann::json& object, std::string_view field,
                        const std::filesystem::path& file, std::size_t line);

// A document of one plain text, split into paragraphs as the flat shapes (CNN/DailyMail,
// XSum-like) split theirs: at blank lines where a blank line stands between two lines of
// text, else at every line. No sections; id and summary empty.
Document flat_document(std::string_view text);

// The native form: lossless for the tree (id, title, headings, nesting, paragraph texts,
// summary). Section levels are implied by nesting; sentence spans are recomputed on
// reading, so from_native_json(to_native_json(d)) reproduces d's text and every span.
nlohmann::json to_native_json(const Document& document);

// Parses one native-form object. Errors name FILE:LINE and the field's path inside the
// object, e.g. "sections[2].sections[0].heading"; line 0 leaves the line out.
Document from_native_json(const nlohmann::json& object, const std::filesystem::path& file,
                          std::size_t line);
// The same, at the reader's current file and line.
Document from_native_json(const nlohmann::json& object, const JsonlReader& reader);

// Writes documents in the native form, one JSON object per line, streaming. The file
// appears under its name only on commit(); a writer destroyed uncommitted leaves any
// previous file untouched.
class NativeJsonlWriter {
 public:
  explicit NativeJsonlWriter(std::filesystem::path path);
  void write(const Document& document);
  std::size_t count() const { return count_; }
  void commit();

 private:
  AtomicFile file_;
  std::size_t count_ = 0;
};

// Writes all documents through a NativeJsonlWriter and commits.
void write_native_jsonl(const std::filesystem::path& path, const std::vector<Document>& documents);

}  // namespace strata
