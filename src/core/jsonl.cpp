#include "strata/core/jsonl.h"

#include <iostream>

#include "strata/core/diagnostics.h"
#include "strata/core/utf8.h"

namespace strata {

namespace {

// One line of `in` into `line`, without its '\n'; false at the end of the input. A line longer
// than `limit` bytes is not read into memory: `too_long` is set and the rest of it skipped.
bool read_line(std::istream& in, std::string& line, std::size_t limit, bool& too_long) {
  line.clear();
  too_long = false;
  char buffer[1 << 16];
  bool any = false;
  while (true) {
    in.getline(buffer, sizeof buffer);
    const std::streamsize got = in.gcount();
    if (got > 0) any = true;
    if (in.bad()) return false;
    // A full buffer without the newline sets failbit: the line goes on.
    const bool more = in.fail() && !in.eof() && got == static_cast<std::streamsize>(sizeof buffer) - 1;
    const std::size_t stored = static_cast<std::size_t>(got) - (more || in.eof() ? 0 : 1);  // minus the '\n'
    if (!too_long && line.size() + stored > limit) {
      too_long = true;
      line.clear();
    }
    if (!too_long) line.append(buffer, stored);
    if (!more) {
      if (in.fail() && !in.eof()) in.clear();  // an empty line
      return any || !in.eof();
    }
    in.clear();
  }
}

}  // namespace

JsonlReader::JsonlReader(std::filesystem::path path, std::size_t max_line_bytes)
    : path_(std::move(path)), max_line_bytes_(max_line_bytes) {
  if (path_ == "-") {
    in_ = &std::cin;
    return;
  }
  if (!std::filesystem::exists(path_)) throw Error(path_.string() + ": no such file");
  file_.open(path_, std::ios::binary);
  if (!file_) throw Error(path_.string() + ": cannot open");
  in_ = &file_;
}

bool JsonlReader::next(nlohmann::json& object) {
  std::string text;
  bool too_long = false;
  while (read_line(*in_, text, max_line_bytes_, too_long)) {
    ++line_;
    if (too_long)
      throw error_at(path_, line_, "",
                     "the line is longer than " + std::to_string(max_line_bytes_) + " bytes, more than any record strata reads");
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.find_first_not_of(" \t") == std::string::npos) continue;
    if (!is_valid_utf8(text)) text = sanitize_utf8(text, &invalid_utf8_);
    try {
      object = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number like 1e999
      throw error_at(path_, line_, "", std::string("malformed JSON: ") + e.what());
    }
    if (!object.is_object()) throw error_at(path_, line_, "", "expected a JSON object");
    return true;
  }
  if (!reported_) report_invalid_utf8(path_, invalid_utf8_);
  reported_ = true;
  return false;
}

Error JsonlReader::error(std::string_view field, std::string_view message) const {
  return error_at(path_, line_, field, message);
}

std::string JsonlReader::string_field(const nlohmann::json& object, std::string_view field) const {
  const auto it = object.find(field);
  if (it == object.end()) throw error(field, "missing");
  if (!it->is_string()) throw error(field, std::string("expected a string, got ") + it->type_name());
  return it->get<std::string>();
}

std::vector<std::string> JsonlReader::string_list_field(const nlohmann::json& object,
                                                        std::string_view field) const {
  const auto it = object.find(field);
  if (it == object.end()) throw error(field, "missing");
  if (!it->is_array()) throw error(field, std::string("expected an array, got ") + it->type_name());
  std::vector<std::string> out;
  out.reserve(it->size());
  for (const auto& item : *it) {
    if (!item.is_string()) throw error(field, "expected an array of strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::vector<nlohmann::json> read_jsonl(const std::filesystem::path& path) {
  JsonlReader reader(path);
  std::vector<nlohmann::json> out;
  nlohmann::json object;
  while (reader.next(object)) out.push_back(std::move(object));
  return out;
}

}  // namespace strata
