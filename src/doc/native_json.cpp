// The strata native form of a Document: the section tree as nested JSON objects.
#include <fmt/format.h>

#include "strata/doc/dataset.h"

namespace strata {

namespace {

using nlohmann::json;

// Deeper nesting is surely not a real document; the limit keeps recursion (here and in
// Section's destructor) far from the stack's end on hostile input.
constexpr int kMaxDepth = 100;

json paragraphs_json(const Document& document, const Section& section) {
  json paragraphs = json::array();
  for (const Paragraph& paragraph : section.paragraphs)
    paragraphs.push_back(std::string(document.slice(paragraph.span)));
  return paragraphs;
}

// Empty lists are left out of section objects: most sections are leaves.
json section_json(const Document& document, const Section& section) {
  json object = json::object();
  object["heading"] = section.heading;
  if (!section.paragraphs.empty()) object["paragraphs"] = paragraphs_json(document, section);
  if (!section.children.empty()) {
    json children = json::array();
    for (const Section& child : section.children) children.push_back(section_json(document, child));
    object["sections"] = std::move(children);
  }
  return object;
}

std::string field_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : fmt::format("{}.{}", parent, key);
}

class NativeParser {
 public:
  NativeParser(const std::filesystem::path& file, std::size_t line) : file_(file), line_(line) {}

  Document parse(const json& object) {
    DocumentBuilder builder(optional_string(object, "title", ""));
    add_paragraphs(builder, object, "");
    if (const auto it = object.find("sections"); it != object.end())
      add_sections(builder, *it, "sections", 1);
    Document document = builder.finish();
    document.id = document_id(object, "id", file_, line_);
    document.summary = optional_string(object, "summary", "");
    return document;
  }

 private:
  Error error(const std::string& field, std::string_view message) const {
    return error_at(file_, line_, field, message);
  }

  std::string string_value(const json& value, const std::string& path) const {
    if (!value.is_string()) throw error(path, std::string("expected a string, got ") + value.type_name());
    return value.get<std::string>();
  }

  std::string optional_string(const json& object, std::string_view key, const std::string& parent) const {
    const auto it = object.find(key);
    return it == object.end() ? std::string() : string_value(*it, field_path(parent, key));
  }

  // object["paragraphs"], when present, into the innermost open section.
  void add_paragraphs(DocumentBuilder& builder, const json& object, const std::string& parent) const {
    const auto it = object.find("paragraphs");
    if (it == object.end()) return;
    const std::string path = field_path(parent, "paragraphs");
    if (!it->is_array()) throw error(path, std::string("expected an array, got ") + it->type_name());
    for (std::size_t i = 0; i < it->size(); ++i)
      builder.add_paragraph(string_value((*it)[i], fmt::format("{}[{}]", path, i)));
  }

  // Sections at tree depth `depth`; the builder nests rank d+1 under the last rank d.
  void add_sections(DocumentBuilder& builder, const json& list, const std::string& path, int depth) const {
    if (!list.is_array()) throw error(path, std::string("expected an array, got ") + list.type_name());
    if (depth > kMaxDepth && !list.empty())
      throw error(path, fmt::format("sections nested deeper than {} levels", kMaxDepth));
    for (std::size_t i = 0; i < list.size(); ++i) {
      const json& section = list[i];
      const std::string item = fmt::format("{}[{}]", path, i);
      if (!section.is_object())
        throw error(item, std::string("expected a section object, got ") + section.type_name());
      // A section object has a closed schema, so a misspelt key is reported, not dropped.
      for (const auto& entry : section.items())
        if (entry.key() != "heading" && entry.key() != "paragraphs" && entry.key() != "sections")
          throw error(field_path(item, entry.key()),
                      "unknown field (a section has heading, paragraphs, sections)");
      const auto heading = section.find("heading");
      if (heading == section.end()) throw error(field_path(item, "heading"), "missing");
      builder.open_section(string_value(*heading, field_path(item, "heading")), depth);
      add_paragraphs(builder, section, item);
      if (const auto children = section.find("sections"); children != section.end())
        add_sections(builder, *children, field_path(item, "sections"), depth + 1);
    }
  }

  const std::filesystem::path& file_;
  std::size_t line_;
};

}  // namespace

json to_native_json(const Document& document) {
  json sections = json::array();
  for (const Section& child : document.root.children) sections.push_back(section_json(document, child));
  json object = json::object();
  object["id"] = document.id;
  object["title"] = document.title;
  object["paragraphs"] = paragraphs_json(document, document.root);
  object["sections"] = std::move(sections);
  object["summary"] = document.summary;
  return object;
}

Document from_native_json(const json& object, const std::filesystem::path& file, std::size_t line) {
  if (!object.is_object()) throw error_at(file, line, "", "expected a JSON object");
  return NativeParser(file, line).parse(object);
}

Document from_native_json(const json& object, const JsonlReader& reader) {
  return from_native_json(object, reader.path(), reader.line());
}

NativeJsonlWriter::NativeJsonlWriter(std::filesystem::path path) : file_(std::move(path)) {}

void NativeJsonlWriter::write(const Document& document) {
  // Replace, not throw, on invalid UTF-8: a hand-built Document may hold any bytes.
  file_.stream() << to_native_json(document).dump(-1, ' ', false, json::error_handler_t::replace)
                 << '\n';
  ++count_;
}

void NativeJsonlWriter::commit() { file_.commit(); }

void write_native_jsonl(const std::filesystem::path& path, const std::vector<Document>& documents) {
  NativeJsonlWriter writer(path);
  for (const Document& document : documents) writer.write(document);
  writer.commit();
}

}  // namespace strata
