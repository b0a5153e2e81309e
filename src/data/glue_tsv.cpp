#include "strata/data/glue_tsv.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <set>
#include <string_view>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/strings.h"

namespace strata {

namespace {

std::vector<std::string_view> cells_of(std::string_view line) {
  std::vector<std::string_view> cells;
  for (;;) {
    const std::size_t tab = line.find('\t');
    cells.push_back(line.substr(0, tab));
    if (tab == std::string_view::npos) return cells;
    line.remove_prefix(tab + 1);
  }
}

// A column's index: its position in the header, or the number it is written as.
std::size_t column_index(const std::string& column, const std::vector<std::string_view>& header,
                         const std::filesystem::path& file, bool has_header) {
  if (has_header)
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == column) return i;
  std::size_t index = 0;
  const auto [end, ec] = std::from_chars(column.data(), column.data() + column.size(), index);
  if (ec != std::errc() || end != column.data() + column.size())
    throw error_at(file, 1, column, has_header ? "no such column in the header" : "not a column index (no header)");
  return index;
}

std::string first_line(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

bool has_column(const std::string& column, const std::vector<std::string_view>& header) {
  for (std::string_view h : header)
    if (h == column) return true;
  return !column.empty() && column.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

std::vector<nlohmann::json> read_glue_tsv(const std::filesystem::path& file, const GlueTsvOptions& options) {
  const std::string text = read_file(file);
  const std::vector<std::string_view> lines = split_lines(text);
  const std::vector<std::string_view> header =
      options.header && !lines.empty() ? cells_of(lines[0]) : std::vector<std::string_view>{};
  struct Field {
    const char* key;
    const std::string* column;
    std::size_t index = 0;
  };
  std::vector<Field> fields{{"text", &options.text}};
  if (!options.text_b.empty()) fields.push_back({"text_b", &options.text_b});
  if (!options.label.empty()) fields.push_back({"label", &options.label});
  for (Field& f : fields) f.index = column_index(*f.column, header, file, options.header);

  std::vector<nlohmann::json> examples;
  for (std::size_t n = options.header ? 1 : 0; n < lines.size(); ++n) {
    if (lines[n].empty()) continue;
    const std::vector<std::string_view> cells = cells_of(lines[n]);
    nlohmann::json example{{"id", options.task + "-" + std::to_string(n + 1)}, {"task", options.task}};
    for (const Field& f : fields) {
      if (f.index >= cells.size())
        throw error_at(file, n + 1, *f.column,
                       "missing: the row has " + std::to_string(cells.size()) + " columns");
      const std::string value(cells[f.index]);
      if (std::string(f.key) == "label" && options.regression) {
        double number = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
        if (ec != std::errc() || end != value.data() + value.size())
          throw error_at(file, n + 1, *f.column, "'" + value + "' is not a number (a regression task's label)");
        example[f.key] = number;
      } else {
        example[f.key] = value;
      }
    }
    examples.push_back(std::move(example));
  }
  return examples;
}

nlohmann::ordered_json import_glue_task(const std::filesystem::path& dir, const GlueTsvOptions& options,
                                const std::filesystem::path& out_dir) {
  namespace fs = std::filesystem;
  if (!fs::exists(dir / "train.tsv")) throw Error((dir / "train.tsv").string() + ": missing (a GLUE task directory has train.tsv and dev.tsv)");
  nlohmann::ordered_json entry{{"kind", options.regression ? "regression" : "classification"},
                               {"pair", !options.text_b.empty()}};
  std::set<std::string> labels;
  nlohmann::ordered_json counts = nlohmann::ordered_json::object();
  std::vector<std::pair<std::string, std::string>> written;  // split, text: written only once all are read
  for (const auto& [file, split] : {std::pair{"train.tsv", "train"}, {"dev.tsv", "validation"}, {"test.tsv", "test"}}) {
    if (!fs::exists(dir / file)) continue;
    GlueTsvOptions o = options;
    if (std::string(split) == "test" && options.header) {  // GLUE's test files carry no labels
      if (!has_column(options.label, cells_of(first_line(dir / file)))) o.label.clear();
    }
    std::string text;
    for (const nlohmann::json& e : read_glue_tsv(dir / file, o)) {
      text += e.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
      if (e.contains("label") && !options.regression) labels.insert(e["label"].get<std::string>());
    }
    counts[split] = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
    written.emplace_back(split, std::move(text));
  }
  for (const auto& [split, text] : written) write_file_atomic(out_dir / "tasks" / options.task / (split + ".jsonl"), text);
  if (!options.regression) entry["labels"] = std::vector<std::string>(labels.begin(), labels.end());
  entry["examples"] = counts;
  nlohmann::ordered_json suite = nlohmann::ordered_json::object();
  if (fs::exists(out_dir / "tasks.json")) suite = nlohmann::ordered_json::parse(read_file(out_dir / "tasks.json"));
  suite[options.task] = entry;
  write_file_atomic(out_dir / "tasks.json", suite.dump(2) + "\n");
  return entry;
}

}  // namespace strata
