#pragma once
// One entry point for every document format: by name (for a --format option) or detected
// from the file's extension and, failing that, its content.
#include <cstddef>
#include <filesystem>
#include <string_view>

#include "strata/doc/document.h"

namespace strata {

enum class DocFormat { Auto, Markdown, Man, Plain, Jsonl };

// "auto", "markdown" (or "md"), "man", "plain" (or "text"), "jsonl"; strata::Error listing
// the valid names otherwise.
DocFormat format_from_name(std::string_view name);
const char* format_name(DocFormat format);

// The format of `path`: .md/.markdown → Markdown; .1-.9 with an optional suffix (.3p,
// .1ssl) → Man; .jsonl → Jsonl; .txt → Plain; a .gz suffix is looked through. Other names
// are detected from `content` (roff requests → Man, '#' headings → Markdown, else Plain).
DocFormat detect_format(const std::filesystem::path& path, std::string_view content);

// Reads one document. For Jsonl, the document at `jsonl_index` (0-based) via DatasetReader;
// strata::Error when the file has fewer. A missing or unreadable file is a strata::Error
// naming it; an empty file gives a Document with no text. Invalid UTF-8 is replaced by
// U+FFFD. The id is the file name (without .gz) unless the format supplies one.
Document read_document(const std::filesystem::path& path, DocFormat format = DocFormat::Auto,
                       std::size_t jsonl_index = 0);

// One document from text already in memory (a request body): Auto detects Markdown, man or
// plain text from the content; Jsonl is a strata::Error. Invalid UTF-8 is replaced by U+FFFD.
// `name` is what a parser's messages call the text.
Document parse_document_text(std::string_view text, DocFormat format, std::string_view name);

}  // namespace strata
