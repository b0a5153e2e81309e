#include "strata/core/config.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <optional>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include "strata/core/edit_distance.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/strings.h"

namespace strata {
namespace {

// One leaf of a parsed TOML document, flattened to its dotted path.
struct Leaf {
  std::string key;
  ConfigValue value;
  std::size_t line = 0;
};

bool is_bare_key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

bool is_bare_key(std::string_view part) {
  return !part.empty() && std::all_of(part.begin(), part.end(), is_bare_key_char);
}

// Keys are dotted paths of bare TOML keys, so that a path names one key unambiguously.
bool is_dotted_key(std::string_view key) {
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = std::min(key.find('.', start), key.size());
    if (!is_bare_key(key.substr(start, dot - start))) return false;
    if (dot == key.size()) return true;
    start = dot + 1;
  }
}

std::vector<std::string_view> split_key(std::string_view key) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t dot; (dot = key.find('.', start)) != std::string_view::npos; start = dot + 1)
    parts.push_back(key.substr(start, dot - start));
  parts.push_back(key.substr(start));
  return parts;
}

bool is_array(ConfigType type) { return type >= ConfigType::BoolArray; }

bool is_empty_array(const ConfigValue& value) {
  return std::visit(
      [](const auto& v) {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) return false;
        else if constexpr (requires { v.empty(); }) return v.empty();
        else return false;
      },
      value);
}

// `value` as `type` where the conversion loses nothing the user wrote: integers widen to
// floats, and an empty array (whose type TOML cannot tell) becomes any array type.
std::optional<ConfigValue> convert(const ConfigValue& value, ConfigType type) {
  const ConfigType have = type_of(value);
  if (have == type) return value;
  if (have == ConfigType::Int && type == ConfigType::Double)
    return static_cast<double>(std::get<std::int64_t>(value));
  if (have == ConfigType::IntArray && type == ConfigType::DoubleArray) {
    const auto& ints = std::get<std::vector<std::int64_t>>(value);
    return std::vector<double>(ints.begin(), ints.end());
  }
  if (is_empty_array(value) && is_array(type)) {
    ConfigValue empty;
    switch (type) {
      case ConfigType::BoolArray: empty = std::vector<bool>{}; break;
      case ConfigType::IntArray: empty = std::vector<std::int64_t>{}; break;
      case ConfigType::DoubleArray: empty = std::vector<double>{}; break;
      default: empty = std::vector<std::string>{}; break;
    }
    return empty;
  }
  return std::nullopt;
}

template <typename T>
std::vector<T> array_of(const toml::array& array) {
  std::vector<T> out;
  for (const toml::node& element : array) out.push_back(*element.value<T>());
  return out;
}

ConfigValue array_value(const toml::array& array, const std::string& key, const std::string& source) {
  const std::size_t line = array.source().begin.line;
  // An empty array has no element type; validate() gives it the declared one.
  if (array.empty()) return std::vector<std::string>{};
  const auto all = [&](auto test) { return std::all_of(array.begin(), array.end(), test); };
  if (all([](const toml::node& n) { return n.is_boolean(); })) return array_of<bool>(array);
  if (all([](const toml::node& n) { return n.is_integer(); })) return array_of<std::int64_t>(array);
  // value<double>() reads integers too, so [1, 2.5] is an array of floats.
  if (all([](const toml::node& n) { return n.is_number(); })) return array_of<double>(array);
  if (all([](const toml::node& n) { return n.is_string(); })) return array_of<std::string>(array);
  throw error_at(source, line, key,
                 "an array must hold booleans, integers, floats or strings, one type throughout");
}

void flatten(const toml::node& node, const std::string& key, const std::string& source,
             std::vector<Leaf>& out) {
  const std::size_t line = node.source().begin.line;
  if (const toml::table* table = node.as_table()) {
    for (const auto& [name, child] : *table) {
      const std::string child_key = key.empty() ? std::string(name.str()) : key + "." + std::string(name.str());
      if (!is_bare_key(name.str()))
        throw error_at(source, child.source().begin.line, child_key,
                       "keys may hold only letters, digits, '_' and '-'");
      flatten(child, child_key, source, out);
    }
    return;
  }
  ConfigValue value;
  if (const toml::array* array = node.as_array()) value = array_value(*array, key, source);
  else if (auto b = node.value_exact<bool>()) value = *b;
  else if (auto i = node.value_exact<std::int64_t>()) value = *i;
  else if (auto d = node.value_exact<double>()) value = *d;
  else if (auto s = node.value_exact<std::string>()) value = std::move(*s);
  else throw error_at(source, line, key, "dates and times are not supported");
  out.push_back({key, std::move(value), line});
}

std::string parse_error_message(const toml::parse_error& error, const std::string& source) {
  const toml::source_position where = error.source().begin;
  return fmt::format("{}:{}:{}: {}", source, where.line, where.column, error.description());
}

// TOML spellings of leaves. toml++'s own printer writes floats with 17 significant digits
// (3e-4 as 0.00029999999999999997); fmt writes the shortest text that reads back exactly.
std::string toml_scalar(bool value) { return value ? "true" : "false"; }
std::string toml_scalar(std::int64_t value) { return fmt::format("{}", value); }

std::string toml_scalar(double value) {
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";  // 1 would read as an integer
  return text;
}

std::string toml_scalar(const std::string& value) {
  std::string text = "\"";
  for (const char c : value) {
    switch (c) {
      case '"': text += "\\\""; break;
      case '\\': text += "\\\\"; break;
      case '\b': text += "\\b"; break;
      case '\t': text += "\\t"; break;
      case '\n': text += "\\n"; break;
      case '\f': text += "\\f"; break;
      case '\r': text += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) text += fmt::format("\\u{:04X}", static_cast<int>(c));
        else text += c;
    }
  }
  return text + "\"";
}

std::string toml_value(const ConfigValue& value) {
  return std::visit(
      [](const auto& v) {
        if constexpr (requires { toml_scalar(v); }) {
          return toml_scalar(v);
        } else {
          std::vector<std::string> elements;
          for (const auto& element : v)
            elements.push_back(toml_scalar(static_cast<typename std::decay_t<decltype(v)>::value_type>(element)));
          return fmt::format("[{}]", fmt::join(elements, ", "));
        }
      },
      value);
}

}  // namespace

ConfigType type_of(const ConfigValue& value) { return static_cast<ConfigType>(value.index()); }

std::string_view type_name(ConfigType type) {
  switch (type) {
    case ConfigType::Bool: return "boolean";
    case ConfigType::Int: return "integer";
    case ConfigType::Double: return "float";
    case ConfigType::String: return "string";
    case ConfigType::BoolArray: return "array of booleans";
    case ConfigType::IntArray: return "array of integers";
    case ConfigType::DoubleArray: return "array of floats";
    case ConfigType::StringArray: return "array of strings";
  }
  return "unknown";
}

ConfigSchema& ConfigSchema::add(std::string key, ConfigValue default_value, std::string help) {
  if (!is_dotted_key(key)) throw std::invalid_argument("config schema: malformed key '" + key + "'");
  for (const ConfigKey& known : keys_) {
    const auto nests = [](std::string_view outer, std::string_view inner) {
      return inner.size() > outer.size() && inner.starts_with(outer) && inner[outer.size()] == '.';
    };
    if (known.key == key || nests(known.key, key) || nests(key, known.key))
      throw std::invalid_argument("config schema: key '" + key + "' clashes with '" + known.key + "'");
  }
  keys_.push_back({std::move(key), std::move(default_value), std::move(help)});
  return *this;
}

const ConfigKey* ConfigSchema::find(std::string_view key) const {
  const auto it = std::find_if(keys_.begin(), keys_.end(), [&](const ConfigKey& k) { return k.key == key; });
  return it == keys_.end() ? nullptr : &*it;
}

Config Config::from_toml(std::string_view text, const std::string& source_name) {
  toml::table table;
  try {
    table = toml::parse(text, source_name);
  } catch (const toml::parse_error& error) {
    throw Error(parse_error_message(error, source_name));
  }
  std::vector<Leaf> leaves;
  flatten(table, "", source_name, leaves);
  Config config;
  for (Leaf& leaf : leaves) config.set(leaf.key, std::move(leaf.value), {source_name, leaf.line});
  return config;
}

Config Config::from_toml_file(const std::filesystem::path& path) {
  return from_toml(read_file(path), path.string());
}

void Config::apply_override(std::string_view assignment) {
  const std::size_t equals = assignment.find('=');
  if (equals == std::string_view::npos)
    throw Error(fmt::format("override '{}': expected KEY=VALUE", assignment));
  const std::string key(trim(assignment.substr(0, equals)));
  const std::string_view text = trim(assignment.substr(equals + 1));
  if (!is_dotted_key(key))
    throw Error(fmt::format("override '{}': the key must be a dotted path such as train.lr",
                            assignment));
  const Origin origin{"override", 0};
  toml::table parsed;
  try {
    parsed = toml::parse(fmt::format("value = {}", text), std::string_view("override"));
  } catch (const toml::parse_error&) {
    // Not a TOML value: a bare word such as name=run7 is meant as a string.
    set(key, std::string(text), origin);
    return;
  }
  const toml::node* node = parsed.get("value");
  if (parsed.size() != 1 || node == nullptr) {
    set(key, std::string(text), origin);
    return;
  }
  std::vector<Leaf> leaves;
  flatten(*node, key, "override", leaves);
  for (Leaf& leaf : leaves) set(leaf.key, std::move(leaf.value), origin);
}

void Config::set(const std::string& key, ConfigValue value, const Origin& origin) {
  // A key is either a table or a value: "train=1" cannot stand beside "train.lr=1".
  for (std::size_t dot = key.find('.'); dot != std::string::npos; dot = key.find('.', dot + 1)) {
    const std::string_view prefix(key.data(), dot);
    if (entries_.contains(prefix))
      throw error_at(origin.source, origin.line, key,
                     fmt::format("'{}' is a value, not a table", prefix));
  }
  const std::string table_prefix = key + ".";
  const auto child = entries_.lower_bound(table_prefix);
  if (child != entries_.end() && child->first.starts_with(table_prefix))
    throw error_at(origin.source, origin.line, key, "this is a table, not a value");
  entries_.insert_or_assign(key, Entry{std::move(value), origin});
}

void Config::validate(const ConfigSchema& schema) {
  std::vector<std::string> known;
  for (const ConfigKey& k : schema.keys()) known.push_back(k.key);
  for (auto& [key, entry] : entries_) {
    const ConfigKey* declared = schema.find(key);
    if (declared == nullptr) {
      std::string message = fmt::format("unknown key '{}'", key);
      if (auto suggestion = closest_match(key, known))
        message += fmt::format(" (did you mean '{}'?)", *suggestion);
      throw error_at(entry.origin.source, entry.origin.line, "", message);
    }
    const ConfigType expected = type_of(declared->default_value);
    std::optional<ConfigValue> converted = convert(entry.value, expected);
    if (!converted)
      throw error_at(entry.origin.source, entry.origin.line, key,
                     fmt::format("expected {}, got {}", type_name(expected),
                                 type_name(type_of(entry.value))));
    entry.value = std::move(*converted);
  }
  for (const ConfigKey& k : schema.keys())
    if (!entries_.contains(k.key)) entries_.emplace(k.key, Entry{k.default_value, {"default", 0}});
}

bool Config::contains(std::string_view key) const { return entries_.contains(key); }

ConfigValue Config::value_as(std::string_view key, ConfigType type) const {
  const auto it = entries_.find(key);
  if (it == entries_.end()) throw Error(fmt::format("config: key '{}' is not set", key));
  std::optional<ConfigValue> converted = convert(it->second.value, type);
  if (!converted)
    throw error_at(it->second.origin.source, it->second.origin.line, key,
                   fmt::format("expected {}, got {}", type_name(type),
                               type_name(type_of(it->second.value))));
  return std::move(*converted);
}

std::string Config::to_toml() const {
  // Leaves grouped under their table; top-level leaves first, as TOML requires.
  std::map<std::string, std::string> tables;
  for (const auto& [key, entry] : entries_) {
    const std::size_t dot = key.rfind('.');
    const std::string table = dot == std::string::npos ? "" : key.substr(0, dot);
    tables[table] += fmt::format("{} = {}\n", key.substr(dot + 1), toml_value(entry.value));
  }
  std::string text;
  for (const auto& [table, leaves] : tables) {
    if (!table.empty()) text += fmt::format("{}[{}]\n", text.empty() ? "" : "\n", table);
    text += leaves;
  }
  return text;
}

nlohmann::json Config::to_json() const {
  nlohmann::json root = nlohmann::json::object();
  for (const auto& [key, entry] : entries_) {
    nlohmann::json* node = &root;
    for (std::string_view part : split_key(key)) node = &(*node)[std::string(part)];
    std::visit([&](const auto& v) { *node = v; }, entry.value);
  }
  return root;
}

namespace {

template <class T>
std::vector<T> json_array(const nlohmann::json& array) {
  std::vector<T> out;
  for (const auto& item : array) out.push_back(item.get<T>());
  return out;
}

std::optional<ConfigValue> json_leaf(const nlohmann::json& v) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float()) return v.get<double>();
  if (v.is_string()) return v.get<std::string>();
  if (!v.is_array()) return std::nullopt;
  auto all = [&](auto&& test) { return std::all_of(v.begin(), v.end(), test); };
  if (all([](const nlohmann::json& x) { return x.is_boolean(); })) return json_array<bool>(v);
  if (all([](const nlohmann::json& x) { return x.is_number_integer(); })) return json_array<std::int64_t>(v);
  if (all([](const nlohmann::json& x) { return x.is_number(); })) return json_array<double>(v);
  if (all([](const nlohmann::json& x) { return x.is_string(); })) return json_array<std::string>(v);
  return std::nullopt;
}

}  // namespace

Config Config::from_json(const nlohmann::json& json, const std::string& source_name) {
  if (!json.is_object()) throw Error(source_name + ": expected a JSON object of config tables");
  Config config;
  const Origin origin{source_name, 0};
  auto add = [&](auto& self, const nlohmann::json& node, const std::string& prefix) -> void {
    for (const auto& [name, value] : node.items()) {
      const std::string key = prefix.empty() ? name : prefix + "." + name;
      if (value.is_object()) {
        self(self, value, key);
        continue;
      }
      std::optional<ConfigValue> leaf = json_leaf(value);
      if (!leaf) throw Error(source_name + ": key '" + key + "': not a value a config can hold");
      config.set(key, std::move(*leaf), origin);
    }
  };
  add(add, json, "");
  return config;
}

bool Config::operator==(const Config& other) const {
  return std::equal(entries_.begin(), entries_.end(), other.entries_.begin(), other.entries_.end(),
                    [](const auto& a, const auto& b) {
                      return a.first == b.first && a.second.value == b.second.value;
                    });
}

nlohmann::json json_setting(const std::string& value, const std::string& key) {
  std::string text = value;
  const std::size_t first = value.find_first_not_of(" \t\n");
  if (first == std::string::npos) return nullptr;
  if (value[first] != '{' && value[first] != '[') {
    std::ifstream in(value);
    if (!in) throw Error(key + ": '" + value + "' is neither inline JSON nor a readable file");
    std::ostringstream buffer;
    buffer << in.rdbuf();
    text = buffer.str();
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(key + ": malformed JSON: " + e.what());
  }
}

}  // namespace strata
