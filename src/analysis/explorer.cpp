#include "strata/analysis/explorer.h"

#include <torch/torch.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>

#include "strata/analysis/bias_matrix.h"
#include "strata/analysis/head_importance.h"
#include "strata/attn/block_mask.h"
#include "strata/attn/kept_call.h"
#include "strata/attn/pair_rules.h"
#include "strata/data/seq2seq_examples.h"
#include "strata/doc/parse.h"
#include "strata/models/collate.h"
#include "strata/nn/multi_head_attention.h"
#include "strata/recipes/loaded_model.h"
#include "strata/train/run_config.h"

namespace strata::analysis {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// Queries per band: a band's weights are heads × kBand × keys floats.
constexpr std::int64_t kBand = 128;
constexpr std::size_t kCachedViews = 32;

// The explorer's state, named (not anonymous) because Explorer::Impl holds it.
namespace explored {

enum class Reading { Seq2Seq, Encoder, LanguageModel };

struct Run {
  std::string id, path;
  recipes::LoadedModel model;
  Reading reading = Reading::Seq2Seq;
  std::vector<NamedAttention> layers;  // the attention modules a document passes through
  std::int64_t max_tokens = 0;
};

// One layer of a document as a run read it: the call it kept, and what is derived from it
// once (its band weights, which hold the block mask, and per-head visible share).
struct LayerReading {
  std::shared_ptr<const attn::KeptCall> call;
  std::unique_ptr<attn::BandWeights> weights;
  std::vector<double> visible_share;  // per head, over all pairs
};

struct RunReading {
  Seq2SeqExample example;  // the tokens and layout the model read
  std::vector<std::string> pieces;
  std::size_t document_tokens = 0;
  std::vector<LayerReading> layers;
};

struct ExploredDocument {
  std::string id, name, format, path;
  strata::Document parsed;
  std::map<std::string, RunReading> runs;
};

}  // namespace explored

namespace {

using explored::ExploredDocument;
using explored::LayerReading;
using explored::Reading;
using explored::Run;
using explored::RunReading;

std::uint64_t fnv1a(std::string_view text, std::uint64_t hash = 14695981039346656037ull) {
  for (const unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

Reading reading_of(const recipes::LoadedModel& model) {
  if (std::dynamic_pointer_cast<models::Seq2SeqImpl>(model.module)) return Reading::Seq2Seq;
  if (std::dynamic_pointer_cast<models::EncoderModelImpl>(model.module)) return Reading::Encoder;
  if (std::dynamic_pointer_cast<models::LanguageModel>(model.module)) return Reading::LanguageModel;
  throw Error("explore: " + model.checkpoint.string() + " is a " + model.config.architecture +
              " model; explore reads documents through seq2seq, encoder and language models");
}

// The self-attention a document passes through: the encoder's for seq2seq and encoder
// models, every layer's for a language model.
std::vector<NamedAttention> document_layers(torch::nn::Module& module, Reading reading) {
  std::vector<NamedAttention> layers;
  for (NamedAttention& layer : attention_modules(module)) {
    const bool self = layer.name.find("self_attn") != std::string::npos;
    if (self && (reading != Reading::Seq2Seq || layer.name.rfind("encoder.", 0) == 0)) layers.push_back(std::move(layer));
  }
  if (layers.empty()) throw Error("explore: the model has no self-attention to show");
  return layers;
}

std::int64_t position_limit(const models::ModelConfig& config, Reading reading, const torch::nn::Module& module) {
  if (reading == Reading::LanguageModel) {
    const auto* lm = dynamic_cast<const models::LanguageModel*>(&module);
    if (lm && lm->max_length() > 0) return lm->max_length();
  }
  return config.positions == "learned" ? config.max_positions : std::numeric_limits<std::int64_t>::max();
}

const Run& find_run(const std::vector<Run>& runs, const std::string& id) {
  for (const Run& run : runs)
    if (run.id == id) return run;
  throw ExploreError(404, "no run '" + id + "' (this server has " + std::to_string(runs.size()) + ")");
}

// Tokens [begin, end) of each section and its subsections; [0, 0] for one that kept none.
Json section_ranges(const Layout& layout) {
  const SectionTree& tree = layout.tree;
  std::vector<std::int64_t> begin(tree.size(), -1), end(tree.size(), 0);
  for (std::size_t i = 0; i < layout.size(); ++i)
    for (int s = layout.section[i]; s >= 0; s = tree.parent[s]) {
      if (begin[s] < 0) begin[s] = static_cast<std::int64_t>(i);
      end[s] = static_cast<std::int64_t>(i) + 1;
    }
  Json ranges = Json::array();
  for (int s = 0; s < tree.size(); ++s) ranges.push_back({std::max<std::int64_t>(begin[s], 0), begin[s] < 0 ? 0 : end[s]});
  return ranges;
}

// Sums one band's values [rows, cols of the view] (rows = queries [b0, b1) of the view) into
// the view's cells: sums[row_bin(i), col_bin(n)] += value. Columns by a running sum read at
// the edges, so a band costs rows × cols whatever the number of cells.
struct CellSums {
  std::vector<std::int64_t> row_edges, col_edges;
  at::Tensor col_index;  // [C + 1] int64: the edges relative to the view's first column
  at::Tensor sums;       // [R, C] double
  CellSums(std::vector<std::int64_t> rows, std::vector<std::int64_t> cols) : row_edges(std::move(rows)), col_edges(std::move(cols)) {
    std::vector<std::int64_t> relative;
    for (const std::int64_t edge : col_edges) relative.push_back(edge - col_edges.front());
    col_index = torch::tensor(relative, torch::kInt64);
    sums = torch::zeros({static_cast<std::int64_t>(row_edges.size()) - 1, static_cast<std::int64_t>(col_edges.size()) - 1},
                        torch::kDouble);
  }
  void add(std::int64_t b0, const at::Tensor& band) {
    const at::Tensor running = torch::cat({torch::zeros({band.size(0), 1}, torch::kDouble), band.to(torch::kDouble).cumsum(1)}, 1);
    const at::Tensor at_edges = running.index_select(1, col_index);
    const at::Tensor per_cell = at_edges.narrow(1, 1, at_edges.size(1) - 1) - at_edges.narrow(1, 0, at_edges.size(1) - 1);
    std::vector<std::int64_t> bins(band.size(0));
    for (std::int64_t i = 0; i < band.size(0); ++i)
      bins[i] = std::upper_bound(row_edges.begin(), row_edges.end(), b0 + i) - row_edges.begin() - 1;
    sums.index_add_(0, torch::tensor(bins, torch::kInt64), per_cell);
  }
  Json means(double* max_value) const {
    Json rows = Json::array();
    auto s = sums.accessor<double, 2>();
    for (std::size_t r = 0; r + 1 < row_edges.size(); ++r) {
      Json row = Json::array();
      for (std::size_t c = 0; c + 1 < col_edges.size(); ++c) {
        const double pairs = static_cast<double>((row_edges[r + 1] - row_edges[r]) * (col_edges[c + 1] - col_edges[c]));
        const double mean = s[r][c] / pairs;
        if (max_value) *max_value = std::max(*max_value, mean);
        row.push_back(static_cast<float>(mean));
      }
      rows.push_back(std::move(row));
    }
    return rows;
  }
};

// What `strata analyze heads` and `strata analyze patterns` left beside the run (their default
// output directories), or null.
Json saved_analysis(const Run& run, const std::string& directory, const std::string& file) {
  const fs::path checkpoint = run.model.checkpoint;
  for (const fs::path& base : {fs::path(run.path), checkpoint, checkpoint.parent_path().parent_path()}) {
    const fs::path candidate = base / directory / file;
    std::error_code error;
    if (!fs::is_regular_file(candidate, error)) continue;
    std::ifstream in(candidate);
    const Json json = Json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!json.is_discarded()) return json;
  }
  return nullptr;
}

Json saved_analyses(const Run& run) {
  return {{"importance", saved_analysis(run, "heads", "importance.json")},
          {"relevance", saved_analysis(run, "patterns", "relevance.json")},
          {"hint", fmt::format("`strata analyze heads --model {0} --data VALID.jsonl` and `strata analyze patterns "
                               "--model {0} --data VALID.jsonl` write these beside the run",
                               run.path)}};
}

std::string run_name(const std::string& path) {
  const fs::path normal = fs::path(path).lexically_normal();
  const std::string name = normal.filename().string();
  return name.empty() ? normal.parent_path().filename().string() : name;  // "runs/x/" ends in a slash
}

std::int64_t view_bound(const std::optional<std::int64_t>& given, std::int64_t fallback, std::int64_t limit,
                        const char* name) {
  const std::int64_t value = given.value_or(fallback);
  if (value < 0 || value > limit)
    throw ExploreError(400, fmt::format("{} = {} is outside [0, {}]", name, value, limit));
  return value;
}

// (query tile, key tile) -> whether the tile is full for every head asked (one head, or all
// of them for the mean). A head with a fixed pattern has no tiles: one key per query.
using VisitedTiles = std::map<std::pair<std::int64_t, std::int64_t>, bool>;

VisitedTiles visited_tiles(const attn::BlockMask& mask, const std::optional<std::int64_t>& head) {
  VisitedTiles visited;
  for (std::int64_t h = 0; h < static_cast<std::int64_t>(mask.head_group.size()); ++h) {
    const std::int32_t group = mask.head_group[h];
    if ((head && h != *head) || group < 0) continue;
    for (std::int64_t qt = 0; qt < mask.q_tiles; ++qt) {
      const std::int64_t row = mask.row(0, group, qt);
      for (std::int64_t e = mask.row_begin[row]; e < mask.row_begin[row + 1]; ++e) {
        const auto [it, fresh] = visited.emplace(std::make_pair(qt, std::int64_t{mask.tile[e]}), mask.full[e] != 0);
        if (!fresh) it->second = it->second && mask.full[e] != 0;
      }
    }
  }
  return visited;
}

// The visited tiles that meet the view [q0, q1) × [k0, k1), as [q_begin, q_end, k_begin, k_end].
Json tiles_json(const attn::BlockMask& mask, const VisitedTiles& visited,
                const std::array<std::int64_t, 4>& view) {
  const auto [q0, q1, k0, k1] = view;
  Json full = Json::array(), partial = Json::array();
  for (const auto& [tile, is_full] : visited) {
    const std::int64_t qa = mask.q_begin(tile.first), qb = qa + mask.q_rows(tile.first);
    const std::int64_t ka = mask.k_begin(tile.second), kb = ka + mask.k_cols(tile.second);
    if (qb <= q0 || qa >= q1 || kb <= k0 || ka >= k1) continue;
    (is_full ? full : partial).push_back({qa, qb, ka, kb});
  }
  return {{"q_tile", mask.q_tile}, {"k_tile", mask.k_tile}, {"full", full}, {"partial", partial}};
}

// Per head, the share of (query, key) pairs the head may see, over the whole call.
std::vector<double> visible_share(const attn::BandWeights& weights, std::int64_t queries, std::int64_t keys) {
  at::Tensor pairs;
  for (std::int64_t b0 = 0; b0 < queries; b0 += kBand) {
    const at::Tensor band = weights.visible_rows(b0, std::min(queries, b0 + kBand)).sum({1, 2}, false, torch::kDouble);
    pairs = pairs.defined() ? pairs + band : band;
  }
  std::vector<double> share;
  for (std::int64_t h = 0; h < pairs.size(0); ++h) share.push_back(pairs[h].item<double>() / static_cast<double>(queries * keys));
  return share;
}

Json document_json(const ExploredDocument& document) {
  Json sections = Json::array();
  Json runs = Json::object();
  for (const auto& [id, reading] : document.runs) {
    const Layout& layout = reading.example.source;
    if (sections.empty())
      for (int s = 0; s < layout.tree.size(); ++s)
        sections.push_back({{"index", s}, {"heading", layout.tree.heading[s]}, {"depth", layout.tree.depth[s]},
                            {"parent", layout.tree.parent[s]}});
    const std::int64_t prefix = reading.layers.empty() ? 0 : reading.layers.front().call->prefix_len;
    runs[id] = {{"tokens", reading.pieces},
                {"token_sections", layout.section},
                {"section_ranges", section_ranges(layout)},
                {"document_tokens", reading.document_tokens},
                {"truncated", reading.document_tokens > layout.size()},
                {"prefix", prefix}};
  }
  return {{"id", document.id},
          {"name", document.name},
          {"format", document.format},
          {"path", document.path.empty() ? Json(nullptr) : Json(document.path)},
          {"sections", sections},
          {"runs", runs}};
}

}  // namespace

std::vector<std::int64_t> bin_edges(std::int64_t begin, std::int64_t end, std::int64_t max_cells) {
  const std::int64_t span = end - begin, cells = std::max<std::int64_t>(1, std::min(max_cells, span));
  std::vector<std::int64_t> edges(cells + 1);
  for (std::int64_t c = 0; c <= cells; ++c) edges[c] = begin + c * span / cells;
  return edges;
}

struct Explorer::Impl {
  ExplorerOptions options;
  std::vector<Run> runs;
  std::deque<ExploredDocument> documents;  // oldest first
  std::deque<std::pair<std::string, Json>> views;  // the last attention views answered, oldest first
  mutable std::mutex mutex;

  ExploredDocument& find_document(const std::string& id) {
    for (ExploredDocument& d : documents)
      if (d.id == id) return d;
    throw ExploreError(404, "no document '" + id + "': post it to /api/documents (the server keeps the last " +
                                std::to_string(options.documents) + ")");
  }

  RunReading read(const Run& run, const strata::Document& document) const {
    const recipes::LoadedModel& m = run.model;
    TruncationOptions truncation = train::data_options(m.run).truncation;
    truncation.max_source_tokens = static_cast<std::size_t>(run.max_tokens);
    RunReading reading;
    TruncationOptions whole = truncation;
    whole.max_source_tokens = std::numeric_limits<std::size_t>::max() / 2;
    try {
      reading.document_tokens = make_source_example(document, *m.tokenizer, whole).source.size();
      reading.example = make_source_example(document, *m.tokenizer, truncation);
    } catch (const Error& e) {
      throw ExploreError(422, "run " + run.id + " cannot read the document: " + e.what());
    }
    if (reading.example.source.size() == 0) throw ExploreError(422, "the document has no text");
    for (const std::int32_t id : reading.example.source.token) {
      const std::int32_t one[] = {id};
      reading.pieces.push_back(m.tokenizer->decode(one));
    }
    for (const NamedAttention& layer : run.layers) layer.module->keep_calls(true);
    try {
      forward(run, reading.example);
    } catch (...) {
      for (const NamedAttention& layer : run.layers) layer.module->keep_calls(false);
      throw;
    }
    for (const NamedAttention& layer : run.layers) {
      LayerReading kept;
      kept.call = layer.module->kept_call();
      layer.module->keep_calls(false);
      if (!kept.call) throw ExploreError(422, "layer " + layer.name + " did not run on the document");
      kept.weights = std::make_unique<attn::BandWeights>(*kept.call);
      reading.layers.push_back(std::move(kept));
    }
    return reading;
  }

  void forward(const Run& run, const Seq2SeqExample& example) const {
    torch::NoGradGuard no_grad;
    const models::ModelConfig& config = run.model.config;
    const std::vector<Seq2SeqExample> one{example};
    const std::size_t row[] = {0};
    const models::Seq2SeqBatch batch = models::collate_seq2seq(one, row, config.pad_id, config.decoder_start_id,
                                                               /*with_targets=*/false, /*with_layout=*/true);
    switch (run.reading) {
      case Reading::Seq2Seq: {
        auto& model = dynamic_cast<models::Seq2SeqImpl&>(*run.model.module);
        model.encode(batch.source, batch.source_padding, model.uses_layout() ? &batch.source_layout : nullptr);
        break;
      }
      case Reading::Encoder: {
        auto& model = dynamic_cast<models::EncoderModelImpl&>(*run.model.module);
        model.encode(batch.source, batch.source_padding, model.uses_layout() ? &batch.source_layout : nullptr);
        break;
      }
      case Reading::LanguageModel:
        dynamic_cast<models::LanguageModel&>(*run.model.module).logits(batch.source);
        break;
    }
  }

  LayerReading& layer_of(const std::string& run, const std::string& doc, std::int64_t layer) {
    const Run& r = find_run(runs, run);
    RunReading& reading = find_document(doc).runs.at(r.id);
    if (layer < 0 || layer >= static_cast<std::int64_t>(reading.layers.size()))
      throw ExploreError(400, fmt::format("layer = {} is outside [0, {})", layer, reading.layers.size()));
    return reading.layers[layer];
  }
};

Explorer::Explorer(const ExplorerOptions& options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  if (options.runs.empty()) throw Error("explore: no run to explore");
  for (std::size_t i = 0; i < options.runs.size(); ++i) {
    Run run;
    run.id = std::string(1, static_cast<char>('a' + i));
    run.path = options.runs[i];
    run.model = recipes::load_model(options.runs[i]);
    run.model.module->eval();
    run.reading = reading_of(run.model);
    run.layers = document_layers(*run.model.module, run.reading);
    run.max_tokens = std::min(options.max_tokens, position_limit(run.model.config, run.reading, *run.model.module));
    impl_->runs.push_back(std::move(run));
  }
}

Explorer::~Explorer() = default;

Json Explorer::runs() const {
  std::lock_guard lock(impl_->mutex);
  Json runs = Json::array();
  for (const Run& run : impl_->runs) {
    Json layers = Json::array();
    for (std::size_t l = 0; l < run.layers.size(); ++l) {
      const nn::MultiHeadAttentionImpl& module = *run.layers[l].module;
      const attn::Relation& relation = module.spec().bias;
      layers.push_back({{"index", l},
                        {"name", run.layers[l].name},
                        {"heads", module.heads()},
                        {"spec", attn::to_string(module.spec())},
                        {"relation", relation.kind == attn::RelationKind::None ? Json(nullptr)
                                                                               : Json(relation_description(relation))}});
    }
    const Json saved = saved_analyses(run);
    runs.push_back({{"id", run.id},
                    {"name", run_name(run.path)},
                    {"path", run.model.checkpoint.string()},
                    {"architecture", run.model.config.architecture},
                    {"max_tokens", run.max_tokens},
                    {"layers", layers},
                    {"analyses", {{"importance", !saved["importance"].is_null()}, {"relevance", !saved["relevance"].is_null()}}}});
  }
  return {{"runs", runs}};
}

Json Explorer::add_document(std::string_view text, std::string_view format, const std::string& name,
                            const std::string& path) {
  std::lock_guard lock(impl_->mutex);
  DocFormat doc_format;
  try {
    doc_format = format_from_name(format.empty() ? "auto" : format);
  } catch (const Error& e) {
    throw ExploreError(400, std::string("format: ") + e.what());
  }
  if (doc_format == DocFormat::Jsonl) throw ExploreError(400, "format: explore reads one document, not JSONL");
  std::uint64_t hash = fnv1a(text);
  hash = fnv1a(format, hash);
  for (const Run& run : impl_->runs) hash = fnv1a(run.path + "\n", hash);
  const std::string id = fmt::format("d{:016x}", hash);
  for (const ExploredDocument& d : impl_->documents)
    if (d.id == id) return document_json(d);

  ExploredDocument document;
  document.id = id;
  document.name = name.empty() ? "document" : name;
  document.path = path;
  if (doc_format == DocFormat::Auto) doc_format = detect_format(document.name, text);
  if (doc_format == DocFormat::Jsonl) doc_format = DocFormat::Plain;  // a name ending in .jsonl, pasted
  document.format = format_name(doc_format);
  try {
    document.parsed = parse_document_text(text, doc_format, document.name);
  } catch (const Error& e) {
    throw ExploreError(422, e.what());
  }
  for (const Run& run : impl_->runs) document.runs.emplace(run.id, impl_->read(run, document.parsed));
  if (impl_->documents.size() >= std::max<std::size_t>(impl_->options.documents, 1)) impl_->documents.pop_front();
  impl_->documents.push_back(std::move(document));
  return document_json(impl_->documents.back());
}

Json Explorer::document(const std::string& id) const {
  std::lock_guard lock(impl_->mutex);
  return document_json(impl_->find_document(id));
}

Json Explorer::analyses(const std::string& run) const {
  std::lock_guard lock(impl_->mutex);
  return saved_analyses(find_run(impl_->runs, run));
}

Json Explorer::biases(const std::string& run, const std::string& doc) const {
  std::lock_guard lock(impl_->mutex);
  const Run& r = find_run(impl_->runs, run);
  const SectionTree& tree = impl_->find_document(doc).runs.at(r.id).example.source.tree;
  Json layers = Json::array();
  std::string message;
  for (std::size_t l = 0; l < r.layers.size(); ++l) {
    const nn::MultiHeadAttentionImpl& module = *r.layers[l].module;
    const attn::Relation& relation = module.spec().bias;
    if (!attn::is_tree_relation(relation.kind) || !module.relation_bias.defined()) continue;
    if (tree.size() < 2) {
      message = "the document has no section below the root: a tree relation has nothing to show";
      break;
    }
    const at::Tensor table = module.relation_bias.detach().to(torch::kCPU, torch::kFloat).contiguous();
    const auto matrix_of = [&](const at::Tensor& row) {
      const at::Tensor values = row.contiguous();
      return to_json(bias_matrix(relation, {values.data_ptr<float>(), static_cast<std::size_t>(values.numel())}, tree));
    };
    Json heads = Json::array();
    for (std::int64_t h = 0; h < table.size(0); ++h) heads.push_back(matrix_of(table[h]));
    layers.push_back({{"layer", l},
                      {"name", r.layers[l].name},
                      {"relation", relation_description(relation)},
                      {"mean", matrix_of(table.mean(0))},
                      {"heads", heads}});
  }
  Json body = {{"layers", layers}};
  if (layers.empty())
    body["message"] = message.empty() ? "no layer of run " + r.id + " has a learned tree relation (HIBRIDS)" : message;
  return body;
}

Json Explorer::attention(const AttentionQuery& query) const {
  std::lock_guard lock(impl_->mutex);
  LayerReading& layer = impl_->layer_of(query.run, query.doc, query.layer);
  const attn::KeptCall& call = *layer.call;
  const std::int64_t heads = call.heads(), queries = call.queries(), keys = call.keys();
  if (query.head && (*query.head < 0 || *query.head >= heads))
    throw ExploreError(400, fmt::format("head = {} is outside [0, {})", *query.head, heads));
  if (query.max_cells < 1 || query.max_cells > 1024)
    throw ExploreError(400, fmt::format("max = {} is outside [1, 1024]", query.max_cells));
  const std::int64_t q0 = view_bound(query.q0, 0, queries, "q0"), q1 = view_bound(query.q1, queries, queries, "q1");
  const std::int64_t k0 = view_bound(query.k0, 0, keys, "k0"), k1 = view_bound(query.k1, keys, keys, "k1");
  if (q0 >= q1 || k0 >= k1) throw ExploreError(400, fmt::format("empty view: queries [{}, {}), keys [{}, {})", q0, q1, k0, k1));
  // A page redraws the same views (overlays, a second panel, going back): the last ones are kept.
  const std::string key = fmt::format("{} {} {} {} {} {} {} {} {}", query.run, query.doc, query.layer,
                                      query.head ? *query.head : -1, q0, q1, k0, k1, query.max_cells);
  for (const auto& [cached_key, cached] : impl_->views)
    if (cached_key == key) return cached;

  CellSums weights(bin_edges(q0, q1, query.max_cells), bin_edges(k0, k1, query.max_cells));
  CellSums visible(weights.row_edges, weights.col_edges);
  for (std::int64_t b0 = q0; b0 < q1; b0 += kBand) {
    const std::int64_t b1 = std::min(q1, b0 + kBand);
    at::Tensor seen;  // [H, r, K] bool
    const at::Tensor band = layer.weights->rows(b0, b1, &seen).narrow(2, k0, k1 - k0);  // [H, r, cols]
    const at::Tensor seen_view = seen.narrow(2, k0, k1 - k0).to(torch::kFloat);
    weights.add(b0, query.head ? band[*query.head] : band.mean(0));
    visible.add(b0, query.head ? seen_view[*query.head] : seen_view.mean(0));
  }
  if (layer.visible_share.empty()) layer.visible_share = visible_share(*layer.weights, queries, keys);

  double max_value = 0;
  Json values = weights.means(&max_value);
  Json body = {{"run", query.run},
               {"doc", query.doc},
               {"layer", query.layer},
               {"head", query.head ? std::to_string(*query.head) : "mean"},
               {"prefix", call.prefix_len},
               {"queries", queries},
               {"keys", keys},
               {"q0", q0}, {"q1", q1}, {"k0", k0}, {"k1", k1},
               {"row_edges", weights.row_edges},
               {"col_edges", weights.col_edges},
               {"values", std::move(values)},
               {"max_value", max_value},
               {"exact", static_cast<std::int64_t>(weights.row_edges.size()) == q1 - q0 + 1 &&
                             static_cast<std::int64_t>(weights.col_edges.size()) == k1 - k0 + 1},
               {"visible", visible.means(nullptr)}};

  // The block mask as the fused kernel compiles it for this call.
  const attn::BlockMask& mask = layer.weights->block_mask();
  const VisitedTiles visited = visited_tiles(mask, query.head);
  body["tiles"] = tiles_json(mask, visited, {q0, q1, k0, k1});
  double share = 0;
  for (std::int64_t h = 0; h < heads; ++h)
    if (!query.head || h == *query.head) share += layer.visible_share[h];
  share /= query.head ? 1.0 : static_cast<double>(heads);
  // Tiles differ in size where they are cut at section boundaries: density is by area.
  double area = 0;
  for (const auto& [tile, is_full] : visited)
    area += static_cast<double>(mask.q_rows(tile.first) * mask.k_cols(tile.second));
  const double total = static_cast<double>(mask.lq * mask.lk);
  body["stats"] = {{"visible_pairs", share},
                   {"sparsity", 1.0 - share},
                   {"tiles_visited", visited.size()},
                   {"tiles_total", mask.q_tiles * mask.k_tiles},
                   {"tile_density", total > 0 ? area / total : 0.0},
                   {"token_sorted", call.runs_token_sorted()}};
  if (impl_->views.size() >= kCachedViews) impl_->views.pop_front();
  impl_->views.emplace_back(key, body);
  return body;
}

}  // namespace strata::analysis
