#pragma once
// strata::Config: the settings of a run (sections such as model / data / train / decode),
// read from a TOML file, changed by `key=value` overrides from the command line, checked
// against a ConfigSchema, and written back out as TOML (--print-config) or JSON (saved
// beside checkpoints). Errors name the file and line (or "override") of the bad key.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace strata {

// A leaf of the configuration. Arrays hold one type each; ConfigType lists the same
// alternatives in the same order.
using ConfigValue = std::variant<bool, std::int64_t, double, std::string, std::vector<bool>,
                                 std::vector<std::int64_t>, std::vector<double>,
                                 std::vector<std::string>>;

enum class ConfigType { Bool, Int, Double, String, BoolArray, IntArray, DoubleArray, StringArray };

ConfigType type_of(const ConfigValue& value);
// The TOML spelling of a type for messages: "integer", "float", "array of strings", ...
std::string_view type_name(ConfigType type);

// One known key: its dotted path ("train.learning_rate"), its default (which also fixes
// its type) and a line of help.
struct ConfigKey {
  std::string key;
  ConfigValue default_value;
  std::string help;
};

class ConfigSchema {
 public:
  // std::invalid_argument (a programming error, not bad input) when the key is not a dotted
  // path of bare TOML keys, is declared twice, or is both a leaf and a table.
  ConfigSchema& add(std::string key, ConfigValue default_value, std::string help);
  const ConfigKey* find(std::string_view key) const;
  const std::vector<ConfigKey>& keys() const { return keys_; }

 private:
  std::vector<ConfigKey> keys_;
};

class Config {
 public:
  // `source_name` is what errors call the text. Syntax errors read "SOURCE:LINE:COL: message".
  static Config from_toml(std::string_view text, const std::string& source_name);
  static Config from_toml_file(const std::filesystem::path& path);
  // The inverse of to_json(): nested objects are tables; leaves are booleans, integers,
  // floats, strings or arrays of one of those. Error naming `source_name` and the key otherwise.
  static Config from_json(const nlohmann::json& json, const std::string& source_name);

  // "train.lr=3e-4": the value is read as a TOML value (3e-4, 100, true, "x", [1, 2],
  // {a = 1}) and, when it is not one, taken as a bare string (name=run7). Creates the key
  // if it is missing; Error when there is no '=' or the key is not a dotted path.
  void apply_override(std::string_view assignment);

  // Checks every key against the schema (Error for an unknown key, with the closest known
  // one, or a value of the wrong type), then makes the config the effective one: integers
  // become floats where floats are declared, and every key not set takes its default.
  void validate(const ConfigSchema& schema);

  bool contains(std::string_view key) const;
  // The value as T (an integer is read as a double too); Error when the key is not set or
  // holds another type. After validate() every schema key is set.
  template <typename T>
  T get(std::string_view key) const {
    return std::get<T>(value_as(key, static_cast<ConfigType>(ConfigValue(std::in_place_type<T>).index())));
  }

  std::string to_toml() const;
  // Nested objects, one per table.
  nlohmann::json to_json() const;

  // Compares keys and values, not where they came from.
  bool operator==(const Config& other) const;

 private:
  struct Origin {
    std::string source;  // file name, "override" or "default"
    std::size_t line = 0;
  };
  struct Entry {
    ConfigValue value;
    Origin origin;
  };

  void set(const std::string& key, ConfigValue value, const Origin& origin);
  ConfigValue value_as(std::string_view key, ConfigType type) const;

  // Keyed by dotted path: the schema, overrides and error messages all name keys that way.
  std::map<std::string, Entry, std::less<>> entries_;
};

// A setting whose value is JSON: "" (null), inline JSON (starting with { or [), or the path of
// a JSON file. strata::Error naming `key` when the file cannot be read or the JSON is malformed.
nlohmann::json json_setting(const std::string& value, const std::string& key);

}  // namespace strata
