#pragma once
// Summarisation datasets in JSON Lines, in the shapes users export, read as Documents with
// their reference summaries. The shape is detected per line from its fields:
//   {article, highlights}                                        CNN/DailyMail
//   {document, summary}                                          XSum-like
//   {article_text[], abstract_text[], section_names[], sections[][]}   arXiv/PubMed
//   {id, title, sections: [{heading, paragraphs[], sections[...]}], summary}  strata native
// docs/formats.md documents each shape with an example.
#include <cstddef>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "strata/core/jsonl.h"
#include "strata/doc/document.h"

namespace strata {

enum class DatasetShape { CnnDm, DocumentSummary, ArxivPubmed, Native };
const char* shape_name(DatasetShape shape);

class DatasetReader {
 public:
  explicit DatasetReader(std::filesystem::path path);  // "-" reads standard input

  // Next document; false at end. strata::Error "FILE:LINE: field 'X': ..." on bad lines.
  bool next(Document& document);
  DatasetShape last_shape() const { return shape_; }
  std::size_t line() const { return reader_.line(); }
  std::size_t invalid_utf8_bytes() const { return reader_.invalid_utf8_bytes(); }

 private:
  JsonlReader reader_;
  DatasetShape shape_ = DatasetShape::Native;
};

// The native form (lossless for the tree; sentence spans are recomputed on reading).
nlohmann::json to_native_json(const Document& document);
// Parses one native-form object; `reader` gives file:line context for errors.
Document from_native_json(const nlohmann::json& object, const JsonlReader& reader);

}  // namespace strata
