#pragma once
// GLUE / SuperGLUE-style TSV files as tasks of the multi-task format `strata data debian`
// writes ({"id", "task", "text", ["text_b",] "label"} lines, tasks.json), so a user who has
// GLUE's files runs the same multi-task training on them. Columns are named by header
// (e.g. "sentence", "label") or by 0-based index (CoLA has no header: --no-header, text 3,
// label 1). Bad rows are a strata::Error naming the file, line and column.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace strata {

struct GlueTsvOptions {
  std::string task;            // the task's name in the suite
  std::string text, text_b;    // columns: a header name or an index; text_b empty = single text
  std::string label;           // empty: an unlabelled file (GLUE's test.tsv)
  bool header = true;          // the first line names the columns
  bool regression = false;     // labels are numbers (STS-B)
};

// One example a row: id "TASK-LINE", the texts, the label (a string, or a number for a
// regression task; absent when options.label is empty).
std::vector<nlohmann::json> read_glue_tsv(const std::filesystem::path& file, const GlueTsvOptions& options);

// Reads DIR/train.tsv, DIR/dev.tsv (as validation) and DIR/test.tsv where present (test
// without labels when its header lacks the label column) and writes them under
// OUT/tasks/TASK/, adding the task to OUT/tasks.json (kept: the other tasks in it). Returns
// the task's entry.
nlohmann::ordered_json import_glue_task(const std::filesystem::path& dir, const GlueTsvOptions& options,
                                const std::filesystem::path& out_dir);

}  // namespace strata
