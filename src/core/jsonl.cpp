#include "strata/core/jsonl.h"

#include <iostream>

#include "strata/core/diagnostics.h"
#include "strata/core/utf8.h"

namespace strata {

JsonlReader::JsonlReader(std::filesystem::path path) : path_(std::move(path)) {
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
  while (std::getline(*in_, text)) {
    ++line_;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.find_first_not_of(" \t") == std::string::npos) continue;
    if (!is_valid_utf8(text)) text = sanitize_utf8(text, &invalid_utf8_);
    try {
      object = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
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
