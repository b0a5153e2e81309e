#include "strata/doc/parse.h"

#include <optional>
#include <string>

#include "strata/core/diagnostics.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/utf8.h"
#include "strata/doc/dataset.h"
#include "strata/doc/manpage.h"
#include "strata/doc/markdown.h"
#include "strata/doc/plain_text.h"

namespace strata {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// The file name without a trailing ".gz".
std::string base_name(const std::filesystem::path& path) {
  std::string name = path.filename().string();
  if (name.size() > 3 && lower(name.substr(name.size() - 3)) == ".gz") name.resize(name.size() - 3);
  return name;
}

std::optional<DocFormat> format_from_extension(const std::filesystem::path& path) {
  const std::string name = base_name(path);
  const std::size_t dot = name.find_last_of('.');
  if (dot == std::string::npos || dot == 0) return std::nullopt;
  const std::string ext = lower(name.substr(dot + 1));
  if (ext == "md" || ext == "markdown" || ext == "mdown" || ext == "mkd") return DocFormat::Markdown;
  if (ext == "jsonl") return DocFormat::Jsonl;
  if (ext == "txt" || ext == "text") return DocFormat::Plain;
  if (ext == "man" || (!ext.empty() && ext.size() <= 6 && ext[0] >= '1' && ext[0] <= '9')) return DocFormat::Man;
  return std::nullopt;
}

bool starts_roff_request(std::string_view line) {
  if (line.size() < 2 || (line[0] != '.' && line[0] != '\'')) return false;
  for (std::string_view macro : {"TH ", "SH", "SS", "so ", "Dd", "Sh ", "\\\""})
    if (line.substr(1, macro.size()) == macro) return true;
  return false;
}

bool markdown_heading(std::string_view line) {
  std::size_t hashes = 0;
  while (hashes < line.size() && line[hashes] == '#') ++hashes;
  return hashes >= 1 && hashes <= 6 && hashes < line.size() && line[hashes] == ' ';
}

DocFormat sniff(std::string_view content) {
  const std::size_t first = content.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return DocFormat::Plain;
  const std::size_t first_end = content.find('\n', first);
  const std::string_view first_line = content.substr(first, first_end == std::string_view::npos ? std::string_view::npos : first_end - first);
  if (content[first] == '{' && first_line.find_last_not_of(" \t\r") != std::string_view::npos &&
      first_line[first_line.find_last_not_of(" \t\r")] == '}')
    return DocFormat::Jsonl;
  bool markdown = false;
  std::size_t begin = 0;
  for (int n = 0; n < 200 && begin < content.size(); ++n) {
    std::size_t end = content.find('\n', begin);
    if (end == std::string_view::npos) end = content.size();
    const std::string_view line = content.substr(begin, end - begin);
    if (starts_roff_request(line)) return DocFormat::Man;
    markdown = markdown || markdown_heading(line) || line.starts_with("```");
    begin = end + 1;
  }
  return markdown ? DocFormat::Markdown : DocFormat::Plain;
}

}  // namespace

DocFormat format_from_name(std::string_view name) {
  const std::string n = lower(name);
  if (n == "auto") return DocFormat::Auto;
  if (n == "markdown" || n == "md") return DocFormat::Markdown;
  if (n == "man") return DocFormat::Man;
  if (n == "plain" || n == "text") return DocFormat::Plain;
  if (n == "jsonl") return DocFormat::Jsonl;
  throw Error("unknown document format '" + std::string(name) +
              "' (valid formats: auto, markdown, man, plain, jsonl)");
}

const char* format_name(DocFormat format) {
  switch (format) {
    case DocFormat::Auto: return "auto";
    case DocFormat::Markdown: return "markdown";
    case DocFormat::Man: return "man";
    case DocFormat::Plain: return "plain";
    case DocFormat::Jsonl: return "jsonl";
  }
  return "auto";
}

DocFormat detect_format(const std::filesystem::path& path, std::string_view content) {
  const std::optional<DocFormat> by_name = format_from_extension(path);
  return by_name ? *by_name : sniff(content);
}

Document read_document(const std::filesystem::path& path, DocFormat format, std::size_t jsonl_index) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw error_at(path, 0, "", "no such file");
  if (std::filesystem::is_directory(path, ec)) throw error_at(path, 0, "", "is a directory, not a document");

  std::string content;
  if (format == DocFormat::Auto) {
    const std::optional<DocFormat> by_name = format_from_extension(path);
    if (by_name) {
      format = *by_name;
    } else {
      content = read_maybe_gzip(path);
      format = sniff(content);
    }
  }

  if (format == DocFormat::Jsonl) {
    DatasetReader reader(path);
    Document document;
    for (std::size_t k = 0; k <= jsonl_index; ++k)
      if (!reader.next(document))
        throw error_at(path, 0, "", "document index " + std::to_string(jsonl_index) +
                                        " is out of range: the file holds " + std::to_string(k) +
                                        " document" + (k == 1 ? "" : "s"));
    if (document.id.empty()) document.id = base_name(path) + ":" + std::to_string(jsonl_index);
    return document;
  }

  if (content.empty()) content = read_maybe_gzip(path);
  if (!is_valid_utf8(content)) {
    std::size_t replaced = 0;
    content = sanitize_utf8(content, &replaced);
    report_invalid_utf8(path, replaced);
  }
  Document document = parse_document_text(content, format, path.string());
  if (document.id.empty()) document.id = base_name(path);
  return document;
}

Document parse_document_text(std::string_view text, DocFormat format, std::string_view name) {
  std::string valid;
  if (!is_valid_utf8(text)) {
    valid = sanitize_utf8(text);
    text = valid;
  }
  if (format == DocFormat::Auto) format = sniff(text);
  switch (format) {
    case DocFormat::Markdown: return parse_markdown(text);
    case DocFormat::Man: return parse_manpage(text, std::string(name)).document;
    case DocFormat::Jsonl: throw Error(std::string(name) + ": a JSONL dataset is not one document");
    default: return parse_plain_text(text);
  }
}

}  // namespace strata
