// Hugging Face checkpoints: the fixtures transformers wrote (../shared/hf-fixtures) import,
// give transformers' numbers with both kernels, generate its token sequences, and export back
// bit for bit; malformed directories are errors naming the field or tensor.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/models/hf_checkpoint.h"
#include "strata/models/seq2seq.h"
#include "strata/nn/safetensors_torch.h"
#include "strata/recipes/hf_models.h"
#include "strata/recipes/model_outputs.h"
#include "strata/train/checkpoint.h"
#include "strata/train/run_config.h"
#include "support/hf_fixtures.h"

namespace strata::recipes {
namespace hf_models_test {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kFixtures = test_support::hf_fixtures();

json read_json(const fs::path& file) { return json::parse(read_file(file)); }

void flatten(const json& j, std::vector<double>& out) {
  if (!j.is_array()) {
    out.push_back(j.get<double>());
    return;
  }
  for (const json& item : j) flatten(item, out);
}

class HfTest : public test_support::HfScratchTest {
 protected:
  // A copy of a fixture to edit.
  fs::path copy_fixture(const std::string& name) {
    const fs::path to = dir_ / ("edited-" + name);
    fs::copy(kFixtures / name, to);
    fs::permissions(to, fs::perms::owner_all, fs::perm_options::add);
    for (const auto& entry : fs::directory_iterator(to))
      fs::permissions(entry.path(), fs::perms::owner_write, fs::perm_options::add);
    return to;
  }
};

struct Case {
  std::string fixture;
  std::string kernel;
};

class HfParity : public HfTest, public testing::WithParamInterface<Case> {};

// Every output transformers recorded (and strata gives) within 1e-4 + 1e-4 |expected| +
// 2e-5 max |expected|: fp32 rounding that reaches a logit through the layers grows with the
// size of the whole output, not of that one element (LED's logits reach 16; orders of
// summation that differ from transformers' move a small one by up to ~3e-4, whichever of
// strata's kernels or tile products runs).
TEST_P(HfParity, ForwardMatchesTransformers) {
  const Case c = GetParam();
  import_hf(kFixtures / c.fixture, dir_ / "run");
  const LoadedModel model = load_model(dir_ / "run", {.require_tokenizer = false, .attention_kernel = c.kernel});
  const json expected = read_json(kFixtures / c.fixture / "forward.json");
  const json got = forward_outputs(model, read_json(kFixtures / c.fixture / "inputs.json"), "inputs.json");
  int compared = 0;
  for (const auto& [name, value] : got.items()) {
    if (name.ends_with("_shape") || !expected.contains(name)) continue;
    EXPECT_EQ(got.at(name + "_shape"), expected.at(name + "_shape")) << name;
    std::vector<double> e, g;
    flatten(expected.at(name), e);
    flatten(value, g);
    ASSERT_EQ(e.size(), g.size()) << name;
    double worst = 0, largest = 0;
    for (double x : e) largest = std::max(largest, std::abs(x));
    std::size_t outside = 0;
    for (std::size_t i = 0; i < e.size(); ++i) {
      worst = std::max(worst, std::abs(g[i] - e[i]));
      if (std::abs(g[i] - e[i]) > 1e-4 + 1e-4 * std::abs(e[i]) + 2e-5 * largest) ++outside;
    }
    EXPECT_EQ(outside, 0u) << c.fixture << " " << name << ": largest difference " << worst;
    ++compared;
  }
  EXPECT_GE(compared, 1) << "no output of " << c.fixture << " was compared";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, HfParity,
                         testing::Values(Case{"bart", "fused"}, Case{"bart", "reference"}, Case{"t5", "fused"},
                                         Case{"t5", "reference"}, Case{"led", "fused"}, Case{"led", "reference"},
                                         Case{"gpt2", "fused"}, Case{"gpt2", "reference"}, Case{"bert", "fused"},
                                         Case{"bert", "reference"}, Case{"bert-seqcls", "fused"},
                                         Case{"bert-seqcls", "reference"}),
                         [](const testing::TestParamInfo<Case>& info) {
                           std::string name = info.param.fixture + "_" + info.param.kernel;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

decode::GenerationOptions generation_of(const LoadedModel& model, std::int64_t beams) {
  decode::GenerationOptions options = train::generation_options(model.run);
  options.max_length = 8;
  options.beam_size = beams;
  return options;
}

class HfGeneration : public HfTest, public testing::WithParamInterface<std::string> {};

TEST_P(HfGeneration, GreedyAndBeamTokensMatchTransformers) {
  const std::string fixture = GetParam();
  import_hf(kFixtures / fixture, dir_ / "run");
  const LoadedModel model = load_model(dir_ / "run", {.require_tokenizer = false});
  // generation_config.json's settings came with it: greedy, no n-gram ban.
  EXPECT_EQ(train::generation_options(model.run).beam_size, 1);
  EXPECT_EQ(train::generation_options(model.run).no_repeat_ngram_size, 0);
  const json expected = read_json(kFixtures / fixture / "generate.json");
  json inputs = read_json(kFixtures / fixture / "inputs.json");
  if (fixture == "gpt2") {
    json prompts = json::array(), sequences = json::array();
    for (const json& result : expected["greedy_single"]["results"]) {
      prompts.push_back(result["prompt"]);
      sequences.push_back(result["sequence"]);
    }
    EXPECT_EQ(generate_outputs(model, {{"input_ids", prompts}}, generation_of(model, 1), "inputs")["sequences"],
              sequences);
    // The same prompts as one batch, left-padded: positions count each row's real tokens.
    const json& batched = expected["greedy_batched_left_padded"];
    EXPECT_EQ(generate_outputs(model, {{"input_ids", batched["input_ids"]}, {"attention_mask", batched["attention_mask"]}},
                               generation_of(model, 1), "inputs")["sequences"],
              batched["sequences"]);
    return;
  }
  EXPECT_EQ(generate_outputs(model, inputs, generation_of(model, 1), "inputs.json")["sequences"],
            expected["greedy"]["sequences"]);
  if (expected.contains("beam"))
    EXPECT_EQ(generate_outputs(model, inputs, generation_of(model, 3), "inputs.json")["sequences"],
              expected["beam"]["sequences"]);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, HfGeneration, testing::Values("bart", "t5", "led", "gpt2"));

class HfRoundTrip : public HfTest, public testing::WithParamInterface<std::string> {};

// import -> export gives transformers' own file back, tensor for tensor and bit for bit, and
// the exported directory imports to the same model.
TEST_P(HfRoundTrip, ExportGivesTheCheckpointBackBitForBit) {
  const std::string fixture = GetParam();
  import_hf(kFixtures / fixture, dir_ / "run");
  const models::HfModel model = export_hf(dir_ / "run", dir_ / "exported");
  const auto original = load_tensors(kFixtures / fixture / "model.safetensors");
  const auto exported = load_tensors(dir_ / "exported" / "model.safetensors");
  ASSERT_EQ(original.size(), exported.size());
  for (const auto& [name, tensor] : original) {
    ASSERT_TRUE(exported.contains(name)) << name;
    EXPECT_TRUE(torch::equal(tensor, exported.at(name))) << name;
  }
  const json config = read_json(dir_ / "exported" / "config.json");
  EXPECT_EQ(config["architectures"][0], model.hf_class);
  const models::HfModel again = models::hf_model_from_config(config, "exported config.json");
  EXPECT_EQ(again.config.to_json(), models::hf_model_from_config(read_json(kFixtures / fixture / "config.json"), "c")
                                        .config.to_json());
  import_hf(dir_ / "exported", dir_ / "reimported");
  const auto first = train::load_checkpoint(train::resolve_checkpoint(dir_ / "run")).weights;
  const auto second = train::load_checkpoint(train::resolve_checkpoint(dir_ / "reimported")).weights;
  ASSERT_EQ(first.size(), second.size());
  for (const auto& [name, tensor] : first) EXPECT_TRUE(torch::equal(tensor, second.at(name))) << name;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, HfRoundTrip, testing::Values("bart", "t5", "led", "gpt2", "bert", "bert-seqcls"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// The name mapping at a real size: a BART-base-shaped model (139 M parameters, 6 + 6 layers)
// goes to transformers' names and back without a tensor lost or changed.
TEST(HfNames, BartBaseShapesMapToTransformersNamesAndBack) {
  models::HfModel bart;
  bart.config.architecture = "seq2seq";
  bart.config.d_model = 768;
  bart.config.heads = 12;
  bart.config.d_ff = 3072;
  bart.config.encoder_layers = bart.config.decoder_layers = 6;
  bart.config.vocab_size = 50265;
  bart.config.max_positions = 1024;
  bart.config.position_offset = 2;
  bart.config.final_logits_bias = true;
  bart.config.pad_id = 1;
  bart.config.bos_id = 0;
  bart.config.eos_id = bart.config.decoder_start_id = 2;
  const models::HfModel model = models::hf_model_of(bart.config);
  ASSERT_EQ(model.hf_class, "BartForConditionalGeneration");
  torch::manual_seed(0);
  models::Seq2Seq seq2seq(model.config);
  const train::NamedTensors ours = train::module_tensors(*seq2seq);
  const models::NamedTensorList theirs = models::strata_weights_to_hf(model, ours);
  std::map<std::string, at::Tensor> by_name(theirs.begin(), theirs.end());
  // transformers' BART-base names (tied embedding once, as version 5 writes it).
  // shared, final_logits_bias, per stack positions + embedding norm (3), 16 tensors per
  // encoder layer, 26 per decoder layer.
  EXPECT_EQ(by_name.size(), 2u + 2 * 3 + 6 * 16 + 6 * 26);
  EXPECT_EQ(by_name.at("model.encoder.embed_positions.weight").sizes(), (at::IntArrayRef{1026, 768}));
  EXPECT_EQ(by_name.at("model.shared.weight").sizes(), (at::IntArrayRef{50265, 768}));
  EXPECT_TRUE(by_name.contains("model.decoder.layers.5.encoder_attn_layer_norm.bias"));
  EXPECT_TRUE(by_name.contains("final_logits_bias"));
  const auto back = models::hf_weights_to_strata(model, by_name, ours, "in memory");
  for (const auto& [name, tensor] : ours) EXPECT_TRUE(torch::equal(tensor, back.at(name))) << name;
}

// ---- what strata refuses, naming the field or the tensor ----

void expect_error(const std::function<void()>& action, const std::string& needle) {
  try {
    action();
    ADD_FAILURE() << "no error; expected one mentioning " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST_F(HfTest, AConfigFieldStrataCannotHonourIsRefused) {
  const fs::path dir = copy_fixture("bart");
  json config = read_json(dir / "config.json");
  config["add_final_layer_norm"] = true;
  write_file_atomic(dir / "config.json", config.dump());
  expect_error([&] { import_hf(dir, dir_ / "run"); }, "'add_final_layer_norm'");
  config.erase("add_final_layer_norm");
  config["rope_theta"] = 10000;
  write_file_atomic(dir / "config.json", config.dump());
  expect_error([&] { import_hf(dir, dir_ / "run"); }, "field 'rope_theta'");
  config.erase("rope_theta");
  config["model_type"] = "llama";
  write_file_atomic(dir / "config.json", config.dump());
  expect_error([&] { import_hf(dir, dir_ / "run"); }, "model_type 'llama'");
  EXPECT_FALSE(fs::exists(dir_ / "run" / "checkpoints"));
}

TEST_F(HfTest, AMissingLeftOverOrMisshapenTensorIsNamed) {
  const fs::path dir = copy_fixture("gpt2");
  auto tensors = load_tensors(kFixtures / "gpt2" / "model.safetensors");
  auto write = [&](const std::map<std::string, at::Tensor>& t) {
    save_tensors(dir / "model.safetensors", {t.begin(), t.end()}, {{"format", "pt"}});
  };
  auto missing = tensors;
  missing.erase("transformer.h.1.mlp.c_fc.bias");
  write(missing);
  expect_error([&] { import_hf(dir, dir_ / "run"); }, "'transformer.h.1.mlp.c_fc.bias' is missing");
  auto extra = tensors;
  extra["transformer.h.0.attn.rotary.weight"] = torch::zeros({2});
  write(extra);
  expect_error([&] { import_hf(dir, dir_ / "run"); }, "'transformer.h.0.attn.rotary.weight'");
  auto tied = tensors;  // an older checkpoint's second copy of the tied embedding must equal it
  tied["lm_head.weight"] = tensors.at("transformer.wte.weight").clone();
  write(tied);
  EXPECT_NO_THROW(import_hf(dir, dir_ / "tied"));
  tied["lm_head.weight"] += 1;
  write(tied);
  expect_error([&] { import_hf(dir, dir_ / "run"); }, "'lm_head.weight' should be a tied copy");
  auto shape = tensors;
  shape["transformer.h.1.attn.c_proj.weight"] = torch::zeros({32, 31});
  write(shape);
  expect_error([&] { import_hf(dir, dir_ / "run"); }, "'transformer.h.1.attn.c_proj.weight' gives [31, 32]");
  // A config.json that claims a vast model fails against the tensors before any is built.
  write(tensors);
  json config = read_json(dir / "config.json");
  config["n_positions"] = config["n_ctx"] = 4000000000;
  write_file_atomic(dir / "config.json", config.dump());
  expect_error([&] { import_hf(dir, dir_ / "run"); }, "'transformer.wpe.weight' gives [64, 32] where strata's "
                                                      "decoder.embed_positions.weight is [4000000000, 32]");
  config["n_positions"] = 3e40;
  write_file_atomic(dir / "config.json", config.dump());
  expect_error([&] { import_hf(dir, dir_ / "run"); }, "field 'n_positions' must be an integer, got 3e+40");
}

// What transformers would build from the exported config.json must be what strata runs.
TEST(HfNames, ExportRefusesWhatTransformersWouldBuildDifferently) {
  models::ModelConfig native;  // strata's own seq2seq: positions from row 0, no logits bias
  native.vocab_size = 64;
  expect_error([&] { models::hf_model_of(native); },
               "model.final_logits_bias = false has no place in BartForConditionalGeneration's config.json");
  native.final_logits_bias = true;
  expect_error([&] { models::hf_model_of(native); }, "model.position_offset = 0 has no place");
  native.position_offset = 2;
  EXPECT_EQ(models::hf_model_of(native).hf_class, "BartForConditionalGeneration");
  native.prefix_length = 4;
  expect_error([&] { models::hf_model_of(native); }, "prefix-tuning");
  native.prefix_length = 0;
  native.norm = "rms";  // T5-like, but with learned positions and biases
  expect_error([&] { models::hf_model_of(native); }, "has no place in T5ForConditionalGeneration's config.json");
}

// Checkpoints older than generation_config.json keep decoding settings in config.json
// (bart-large-cnn: beams, lengths, n-gram ban, forced bos and eos); they become the run's.
TEST_F(HfTest, DecodingSettingsOfOlderConfigsAndForcedTokens) {
  const fs::path dir = copy_fixture("bart");
  fs::remove(dir / "generation_config.json");
  json config = read_json(dir / "config.json");
  const json older = {{"num_beams", 4}, {"max_length", 9}, {"min_length", 3}, {"no_repeat_ngram_size", 3},
                      {"length_penalty", 2.0}, {"early_stopping", true}, {"forced_bos_token_id", 0},
                      {"forced_eos_token_id", 2}, {"force_bos_token_to_be_generated", true},
                      {"extra_pos_embeddings", 2}, {"_num_labels", 3}, {"num_hidden_layers", 2}, {"output_past", true}};
  for (const auto& [key, value] : older.items()) config[key] = value;
  write_file_atomic(dir / "config.json", config.dump());
  import_hf(dir, dir_ / "run");
  const LoadedModel model = load_model(dir_ / "run", {.require_tokenizer = false});
  const decode::GenerationOptions g = train::generation_options(model.run);
  EXPECT_EQ(g.beam_size, 4);
  EXPECT_EQ(g.max_length, 8);  // transformers counts the decoder start token
  EXPECT_EQ(g.min_length, 2);
  EXPECT_EQ(g.no_repeat_ngram_size, 3);
  EXPECT_DOUBLE_EQ(g.length_penalty, 2.0);
  EXPECT_TRUE(g.early_stopping);
  EXPECT_EQ(g.forced_bos_id, 0);
  EXPECT_TRUE(g.forced_eos);
  // Forced tokens: the first generated token and the last one max_length allows.
  decode::GenerationOptions options = generation_of(model, 1);
  options.forced_bos_id = 5;
  options.forced_eos = true;
  options.max_length = 4;
  const json rows = generate_outputs(model, read_json(kFixtures / "bart" / "inputs.json"), options, "inputs.json")["sequences"];
  for (const json& row : rows) {
    EXPECT_EQ(row[1], 5) << row.dump();
    EXPECT_EQ(row.back(), 2) << row.dump();
  }
  export_hf(dir_ / "run", dir_ / "exported");
  const json generation = read_json(dir_ / "exported" / "generation_config.json");
  EXPECT_EQ(generation["forced_bos_token_id"], 0);
  EXPECT_EQ(generation["forced_eos_token_id"], 2);
  config["repetition_penalty"] = 1.2;
  write_file_atomic(dir / "config.json", config.dump());
  expect_error([&] { import_hf(dir, dir_ / "penalised"); }, "field 'repetition_penalty' = 1.2 is not supported");
}

// T5 v1.1 / FLAN-T5: gated feed-forward blocks (wi_0 through gelu_new, times wi_1) and an
// untied head. No transformers fixture here: the block is checked against transformers'
// formula on the checkpoint's own tensors, and the checkpoint round-trips.
TEST_F(HfTest, GatedT5BlocksFollowTransformersFormula) {
  const fs::path dir = copy_fixture("t5");
  json config = read_json(dir / "config.json");
  config["feed_forward_proj"] = "gated-gelu";
  config["dense_act_fn"] = "gelu_new";
  config["is_gated_act"] = true;
  config["tie_word_embeddings"] = false;
  config.erase("scale_decoder_outputs");
  write_file_atomic(dir / "config.json", config.dump());
  torch::manual_seed(3);
  std::map<std::string, at::Tensor> tensors;
  for (auto& [name, tensor] : load_tensors(dir / "model.safetensors")) {
    if (const auto at = name.find("DenseReluDense.wi.weight"); at != std::string::npos) {
      const std::string stem = name.substr(0, at) + "DenseReluDense.wi_";
      tensors[stem + "0.weight"] = tensor;
      tensors[stem + "1.weight"] = torch::randn_like(tensor);
    } else {
      tensors[name] = tensor;
    }
  }
  tensors["lm_head.weight"] = torch::randn({128, 32});
  save_tensors(dir / "model.safetensors", {tensors.begin(), tensors.end()}, {{"format", "pt"}});
  import_hf(dir, dir_ / "run");
  const LoadedModel model = load_model(dir_ / "run", {.require_tokenizer = false});
  EXPECT_TRUE(model.config.ffn_gated);
  EXPECT_FALSE(model.config.scale_decoder_outputs);  // the untied head reads the output as it is
  auto seq2seq = std::dynamic_pointer_cast<models::Seq2SeqImpl>(model.module);
  ASSERT_TRUE(seq2seq);
  torch::NoGradGuard no_grad;
  const at::Tensor x = torch::randn({2, 5, 32});
  auto& layer = *seq2seq->decoder->layers[1]->as<nn::DecoderLayer>();
  nn::LayerOptions gelu_new;
  gelu_new.activation = model.config.activation;
  ASSERT_EQ(gelu_new.activation, "gelu_new");
  const at::Tensor ours = nn::feed_forward(x, layer.fc1, layer.fc_gate, layer.fc2, gelu_new, false);
  const at::Tensor wi_0 = tensors.at("decoder.block.1.layer.2.DenseReluDense.wi_0.weight");
  const at::Tensor wi_1 = tensors.at("decoder.block.1.layer.2.DenseReluDense.wi_1.weight");
  const at::Tensor wo = tensors.at("decoder.block.1.layer.2.DenseReluDense.wo.weight");
  const at::Tensor theirs = torch::matmul(torch::gelu(torch::matmul(x, wi_0.t()), "tanh") * torch::matmul(x, wi_1.t()), wo.t());
  EXPECT_TRUE(torch::allclose(ours, theirs, 1e-5, 1e-5));
  const json out = forward_outputs(model, read_json(kFixtures / "t5" / "inputs.json"), "inputs.json");
  EXPECT_EQ(out["logits_shape"], json({2, 6, 128}));
  export_hf(dir_ / "run", dir_ / "exported");
  EXPECT_EQ(read_json(dir_ / "exported" / "config.json")["feed_forward_proj"], "gated-gelu");
  const auto exported = load_tensors(dir_ / "exported" / "model.safetensors");
  ASSERT_EQ(exported.size(), tensors.size());
  for (const auto& [name, tensor] : tensors) EXPECT_TRUE(torch::equal(tensor, exported.at(name))) << name;
}

TEST_F(HfTest, ShardedCheckpointsAndTokenizersImport) {
  const fs::path dir = copy_fixture("bert");
  const auto tensors = load_tensors(dir / "model.safetensors");
  std::vector<std::pair<std::string, at::Tensor>> first, second;
  json map = json::object();
  for (const auto& [name, tensor] : tensors) {
    const bool one = name.starts_with("embeddings");
    (one ? first : second).emplace_back(name, tensor);
    map[name] = one ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
  }
  save_tensors(dir / "model-00001-of-00002.safetensors", first);
  save_tensors(dir / "model-00002-of-00002.safetensors", second);
  fs::remove(dir / "model.safetensors");
  write_file_atomic(dir / "model.safetensors.index.json", json{{"weight_map", map}}.dump());
  std::string vocab;  // a BERT vocab.txt of the model's 128 ids
  for (const char* piece : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "man", "##s", "page"})
    vocab += std::string(piece) + "\n";
  for (int i = 9; i < 128; ++i) vocab += "w" + std::to_string(i) + "\n";
  write_file_atomic(dir / "vocab.txt", vocab);
  const HfImportReport report = import_hf(dir, dir_ / "run");
  EXPECT_EQ(report.tokenizer, "wordpiece");
  const LoadedModel model = load_model(dir_ / "run");
  EXPECT_EQ(model.tokenizer->encode("The man pages"), (std::vector<std::int32_t>{5, 6, 8, 7}));
  export_hf(dir_ / "run", dir_ / "exported");
  EXPECT_EQ(read_file(dir_ / "exported" / "vocab.txt"), vocab);
  write_file_atomic(dir / "vocab.txt", vocab + "one\ntoo\nmany\n");  // 131 ids for 128 rows
  const HfImportReport wide = import_hf(dir, dir_ / "too-many");
  ASSERT_EQ(wide.warnings.size(), 1u);
  EXPECT_NE(wide.warnings[0].find("the tokenizer has 131 ids, the model's vocabulary 128"), std::string::npos);
}

}  // namespace hf_models_test
}  // namespace strata::recipes
