#include "strata/eval/qs_hierarchy.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>
#include <nlohmann/json.hpp>

#include "strata/core/error.h"
#include "strata/core/jsonl.h"
#include "strata/core/strings.h"
#include "strata/doc/dataset.h"
#include "strata/eval/rouge.h"

namespace strata {

namespace {

using json = nlohmann::json;

std::size_t count_pairs(const std::vector<QsNode>& nodes) {
  std::size_t n = nodes.size();
  for (const QsNode& node : nodes) n += count_pairs(node.children);
  return n;
}

void flatten_into(const std::vector<QsNode>& nodes, int parent, int depth, FlatQs& flat) {
  for (const QsNode& node : nodes) {
    const int index = static_cast<int>(flat.size());
    flat.question.push_back(node.question);
    flat.summary.push_back(node.summary);
    flat.parent.push_back(parent);
    flat.depth.push_back(depth);
    flatten_into(node.children, index, depth + 1, flat);
  }
}

}  // namespace

std::size_t QsHierarchy::size() const { return count_pairs(roots); }

std::size_t QsHierarchy::edges() const { return size() - roots.size(); }

FlatQs flatten(const QsHierarchy& hierarchy) {
  FlatQs flat;
  flatten_into(hierarchy.roots, -1, 0, flat);
  return flat;
}

QsHierarchy unflatten(const FlatQs& flat) {
  const std::size_t n = flat.size();
  std::vector<std::vector<int>> children(n);
  std::vector<int> top;
  for (std::size_t i = 0; i < n; ++i) {
    const int parent = flat.parent[i];
    if (parent < -1 || parent >= static_cast<int>(i))
      throw Error(fmt::format("unflatten: pair {} has parent {}, expected -1 .. {}", i, parent,
                              static_cast<int>(i) - 1));
    (parent < 0 ? top : children[parent]).push_back(static_cast<int>(i));
  }
  // Children come after their parent, so building from the back finds them complete.
  std::vector<QsNode> nodes(n);
  for (std::size_t i = n; i-- > 0;) {
    nodes[i].question = flat.question[i];
    nodes[i].summary = flat.summary[i];
    for (const int child : children[i]) nodes[i].children.push_back(std::move(nodes[child]));
  }
  QsHierarchy hierarchy;
  for (const int root : top) hierarchy.roots.push_back(std::move(nodes[root]));
  return hierarchy;
}

// ---- linearisation -----------------------------------------------------------------------

namespace {

void append_word(std::string& out, std::string_view word) {
  if (word.empty()) return;
  if (!out.empty()) out += ' ';
  out.append(word);
}

void append_level_change(std::string& out, int from, int to, const LevelTokens& tokens) {
  if (to > from) {
    append_word(out, tokens.deeper);
  } else if (to == from) {
    append_word(out, tokens.same);
  } else {
    for (int level = to; level < from; ++level) append_word(out, tokens.shallower);
  }
}

}  // namespace

std::string linearize(const QsHierarchy& hierarchy, const LevelTokens& tokens) {
  const FlatQs flat = flatten(hierarchy);
  std::string out;
  for (std::size_t i = 0; i < flat.size(); ++i) {
    if (i > 0) append_level_change(out, flat.depth[i - 1], flat.depth[i], tokens);
    append_word(out, trim(flat.question[i]));
    append_word(out, trim(flat.summary[i]));
  }
  return out;
}

bool QsParseRepairs::any() const {
  return leading_tokens + clamped_deeper + clamped_shallower + empty_pairs > 0;
}

namespace {

enum class LevelChange { deeper, shallower, same };

void check_tokens(const LevelTokens& tokens) {
  if (tokens.deeper.empty() || tokens.shallower.empty() || tokens.same.empty())
    throw Error("level tokens must not be empty");
  if (tokens.deeper == tokens.shallower || tokens.deeper == tokens.same ||
      tokens.shallower == tokens.same)
    throw Error("level tokens must differ from each other");
}

// Builds the flat hierarchy pair by pair as the text is scanned.
class HierarchyBuilder {
 public:
  explicit HierarchyBuilder(QsParseRepairs& repairs) : repairs_(repairs) {}

  void level_token(LevelChange change) {
    if (flat_.size() == 0) {
      ++repairs_.leading_tokens;
      return;
    }
    pending_ = true;
    last_token_ = change;
    const int deepest = std::min(previous_depth() + 1, kMaxQsDepth - 1);
    if (change == LevelChange::deeper) {
      if (cursor_ < deepest)
        ++cursor_;
      else
        ++repairs_.clamped_deeper;
    } else if (change == LevelChange::shallower) {
      if (cursor_ > 0)
        --cursor_;
      else
        ++repairs_.clamped_shallower;
    }
  }

  // The text between two level tokens; `next` is the token after it, if any.
  void piece(std::string_view text, std::optional<LevelChange> next) {
    text = trim(text);
    if (text.empty()) {
      // Blank before the first pair is just the start of the text, and between two "[L↓]"
      // it is how several levels up are written; anywhere else a token announced a pair
      // that never came.
      const bool levels_up = last_token_ == LevelChange::shallower && next == LevelChange::shallower;
      if (pending_ && !levels_up) ++repairs_.empty_pairs;
      return;
    }
    add_pair(text, cursor_);  // 0 for the first pair: leading tokens do not move it
  }

  FlatQs take() { return std::move(flat_); }

 private:
  int previous_depth() const { return static_cast<int>(last_at_depth_.size()) - 1; }

  void add_pair(std::string_view text, int depth) {
    const std::size_t mark = text.find('?');
    if (mark == std::string_view::npos) ++repairs_.pairs_without_question;
    const std::size_t split = mark == std::string_view::npos ? 0 : mark + 1;
    flat_.question.emplace_back(trim(text.substr(0, split)));
    flat_.summary.emplace_back(trim(text.substr(split)));
    flat_.parent.push_back(depth == 0 ? -1 : last_at_depth_[depth - 1]);
    flat_.depth.push_back(depth);
    last_at_depth_.resize(depth + 1);
    last_at_depth_[depth] = static_cast<int>(flat_.size()) - 1;
    cursor_ = depth;
    pending_ = false;
  }

  QsParseRepairs& repairs_;
  FlatQs flat_;
  std::vector<int> last_at_depth_;  // index of the latest pair at each depth on the path
  int cursor_ = 0;
  bool pending_ = false;  // level tokens seen since the last pair
  LevelChange last_token_ = LevelChange::same;
};

// The longest level token starting at text[at], if any.
std::optional<std::pair<LevelChange, std::size_t>> token_at(std::string_view text, std::size_t at,
                                                            const LevelTokens& tokens) {
  std::optional<std::pair<LevelChange, std::size_t>> found;
  const std::string_view rest = text.substr(at);
  for (const auto& [change, token] : {std::pair{LevelChange::deeper, &tokens.deeper},
                                      std::pair{LevelChange::shallower, &tokens.shallower},
                                      std::pair{LevelChange::same, &tokens.same}})
    if (rest.starts_with(*token) && (!found || token->size() > found->second))
      found = std::pair{change, token->size()};
  return found;
}

}  // namespace

QsHierarchy parse_hierarchy(std::string_view text, const LevelTokens& tokens,
                            QsParseRepairs* repairs) {
  check_tokens(tokens);
  QsParseRepairs local;
  QsParseRepairs& counts = repairs ? *repairs : local;
  counts = {};
  HierarchyBuilder builder(counts);
  std::size_t piece_start = 0;
  for (std::size_t at = 0; at < text.size();) {
    const auto token = token_at(text, at, tokens);
    if (!token) {
      ++at;
      continue;
    }
    builder.piece(text.substr(piece_start, at - piece_start), token->first);
    builder.level_token(token->first);
    at += token->second;
    piece_start = at;
  }
  builder.piece(text.substr(piece_start), std::nullopt);
  return unflatten(builder.take());
}

// ---- hierarchy F1 ------------------------------------------------------------------------

namespace {

// Each generated pair's best reference pair by ROUGE-1 F + ROUGE-2 F of the summaries.
struct PairMapping {
  std::vector<int> reference;
  std::vector<double> score;
};

PairMapping map_pairs(const FlatQs& generated, const FlatQs& reference) {
  static const RougeScorer scorer(std::vector<std::string>{"rouge1", "rouge2"}, true);
  PairMapping mapping;
  for (std::size_t g = 0; g < generated.size(); ++g) {
    int best = 0;
    double best_score = -1;
    for (std::size_t r = 0; r < reference.size(); ++r) {
      const auto row = scorer.score_row(reference.summary[r], generated.summary[g]);
      const double score = row[0].fmeasure + row[1].fmeasure;
      if (score > best_score) {  // strictly greater: ties keep the lowest index
        best = static_cast<int>(r);
        best_score = score;
      }
    }
    mapping.reference.push_back(best);
    mapping.score.push_back(best_score);
  }
  return mapping;
}

bool is_proper_ancestor(const std::vector<int>& parent, int ancestor, int node) {
  for (int up = parent[node]; up >= 0; up = parent[up])
    if (up == ancestor) return true;
  return false;
}

double ratio(double value, std::size_t total) { return total == 0 ? 0.0 : value / total; }

}  // namespace

HierarchyF1 hierarchy_f1(const QsHierarchy& generated, const QsHierarchy& reference) {
  const FlatQs gen = flatten(generated);
  const FlatQs ref = flatten(reference);
  HierarchyF1 out;
  out.generated_edges = generated.edges();
  out.reference_edges = reference.edges();
  if (out.generated_edges == 0 || ref.size() == 0) return out;

  const PairMapping mapping = map_pairs(gen, ref);
  double weight = 0;
  for (std::size_t c = 0; c < gen.size(); ++c) {
    const int p = gen.parent[c];
    if (p < 0 || !is_proper_ancestor(ref.parent, mapping.reference[p], mapping.reference[c]))
      continue;
    ++out.matched_edges;
    weight += (mapping.score[p] + mapping.score[c]) / 4.0;
  }
  out.precision = ratio(weight, out.generated_edges);
  out.recall = ratio(weight, out.reference_edges);
  const double sum = out.precision + out.recall;
  out.f1 = sum > 0 ? 2 * out.precision * out.recall / sum : 0.0;
  return out;
}

HierarchyF1 mean_hierarchy_f1(std::span<const HierarchyF1> examples) {
  HierarchyF1 mean;
  for (const HierarchyF1& e : examples) {
    mean.precision += e.precision;
    mean.recall += e.recall;
    mean.f1 += e.f1;
    mean.generated_edges += e.generated_edges;
    mean.reference_edges += e.reference_edges;
    mean.matched_edges += e.matched_edges;
  }
  mean.precision = ratio(mean.precision, examples.size());
  mean.recall = ratio(mean.recall, examples.size());
  mean.f1 = ratio(mean.f1, examples.size());
  return mean;
}

std::string questions_text(const QsHierarchy& hierarchy) {
  const FlatQs flat = flatten(hierarchy);
  std::string text;
  for (const std::string& question : flat.question) {
    const std::string_view q = trim(question);
    if (q.empty()) continue;
    if (!text.empty()) text += ' ';
    text += q;
  }
  return text;
}

std::string summaries_text(const QsHierarchy& hierarchy) {
  const FlatQs flat = flatten(hierarchy);
  std::string text;
  for (std::size_t i = 0; i < flat.size(); ++i) {
    if (i > 0) text += '\n';
    text += trim(flat.summary[i]);
  }
  return text;
}

// ---- JSONL -------------------------------------------------------------------------------

namespace {

std::string type_message(std::string_view expected, const json& value) {
  return fmt::format("expected {}, got {}", expected, value.type_name());
}

// Nodes of one line, with errors naming the field's path inside the line.
class QsNodeReader {
 public:
  explicit QsNodeReader(const JsonlReader& reader) : reader_(reader) {}

  std::vector<QsNode> nodes(const json& list, const std::string& path, int depth) const {
    if (!list.is_array()) throw reader_.error(path, type_message("an array", list));
    if (depth > kMaxQsDepth && !list.empty())
      throw reader_.error(path, fmt::format("QS pairs nested deeper than {} levels", kMaxQsDepth));
    std::vector<QsNode> out;
    for (std::size_t i = 0; i < list.size(); ++i)
      out.push_back(node(list[i], fmt::format("{}[{}]", path, i), depth));
    return out;
  }

 private:
  QsNode node(const json& object, const std::string& path, int depth) const {
    if (!object.is_object()) throw reader_.error(path, type_message("a QS pair object", object));
    // A closed schema: a misspelt key is reported, not silently dropped.
    for (const auto& entry : object.items())
      if (entry.key() != "question" && entry.key() != "summary" && entry.key() != "children")
        throw reader_.error(path + "." + entry.key(),
                            "unknown field (a QS pair has question, summary, children)");
    QsNode node;
    node.question = string_at(object, path, "question");
    node.summary = string_at(object, path, "summary");
    if (const auto children = object.find("children"); children != object.end())
      node.children = nodes(*children, path + ".children", depth + 1);
    return node;
  }

  std::string string_at(const json& object, const std::string& path, const char* key) const {
    const std::string field = path + "." + key;
    const auto it = object.find(key);
    if (it == object.end()) throw reader_.error(field, "missing");
    if (!it->is_string()) throw reader_.error(field, type_message("a string", *it));
    return it->get<std::string>();
  }

  const JsonlReader& reader_;
};

}  // namespace

std::vector<QsExample> load_qs_hierarchies(const std::filesystem::path& path) {
  JsonlReader reader(path);
  const QsNodeReader nodes(reader);
  std::vector<QsExample> examples;
  json object;
  while (reader.next(object)) {
    QsExample example;
    example.id = document_id(object, "id", reader.path(), reader.line());
    const auto document = object.find("document");
    if (document == object.end()) throw reader.error("document", "missing");
    if (document->is_string()) {
      example.document = flat_document(document->get<std::string>());
    } else if (document->is_object()) {
      example.document = from_native_json(*document, reader);
    } else {
      throw reader.error("document", type_message("a string or a native document object", *document));
    }
    const auto hierarchy = object.find("hierarchy");
    if (hierarchy == object.end()) throw reader.error("hierarchy", "missing");
    example.hierarchy.roots = nodes.nodes(*hierarchy, "hierarchy", 1);
    examples.push_back(std::move(example));
  }
  return examples;
}

namespace {

nlohmann::ordered_json nodes_json(const std::vector<QsNode>& nodes) {
  nlohmann::ordered_json array = nlohmann::ordered_json::array();
  for (const QsNode& node : nodes) {
    nlohmann::ordered_json object{{"question", node.question}, {"summary", node.summary}};
    if (!node.children.empty()) object["children"] = nodes_json(node.children);
    array.push_back(std::move(object));
  }
  return array;
}

}  // namespace

nlohmann::ordered_json hierarchy_json(const QsHierarchy& hierarchy) { return nodes_json(hierarchy.roots); }

nlohmann::ordered_json qs_example_json(const QsExample& example) {
  nlohmann::ordered_json line{{"id", example.id}};
  const Document& d = example.document;
  if (d.title.empty() && d.root.children.empty()) {
    line["document"] = d.text;
  } else {
    Document content = d;
    content.id.clear();
    content.summary.clear();
    line["document"] = to_native_json(content);
  }
  line["hierarchy"] = hierarchy_json(example.hierarchy);
  return line;
}

}  // namespace strata
