// Adapter files: they reproduce the adapted model on its own base, for each architecture and
// both kinds, and are refused on another base of the same sizes.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>

#include "strata/core/safetensors.h"
#include "strata/models/adapter_file.h"
#include "strata/models/backbone_fingerprint.h"
#include "strata/nn/adapters.h"
#include "support/adapter_models.h"
#include "support/expect.h"

namespace strata::models {
namespace {

using test_support::error_of;

std::filesystem::path scratch(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "strata-adapter-file-test";
  std::filesystem::create_directories(dir);
  return dir / name;
}

// Gives every adapter tensor random values (a trained adapter, as far as files care).
void randomise_adapters(torch::nn::Module& model) {
  torch::NoGradGuard no_grad;
  const auto parameters = model.named_parameters();
  for (const std::string& name : nn::adapter_parameter_names(model)) parameters[name].normal_(0.0, 0.1);
}

TEST(AdapterFile, ReproducesTheAdaptedModelOnItsBase) {
  for (const char* architecture : {"seq2seq", "causal_lm", "encoder"}) {
    SCOPED_TRACE(architecture);
    test_support::TinyModel tuned = test_support::tiny_model(architecture, 21);
    tuned.module->eval();
    const std::string base_fingerprint = backbone_fingerprint(*tuned.module);
    // Two LoRA settings and bottleneck adapters, so the file records three groups.
    nn::add_lora(*tuned.module, {.settings = {.r = 2, .alpha = 4}, .targets = {"*.q_proj"}});
    nn::add_lora(*tuned.module, {.settings = {.r = 3, .alpha = 3, .dropout = 0.1}, .targets = {"*.v_proj"}});
    nn::add_bottleneck(*tuned.module, test_support::bottleneck_options(4, "gelu"));
    randomise_adapters(*tuned.module);
    EXPECT_EQ(backbone_fingerprint(*tuned.module), base_fingerprint);  // adapters are not the backbone
    const at::Tensor adapted = tuned.output().detach();
    const auto file = scratch(std::string(architecture) + ".safetensors");
    save_adapter_file(file, *tuned.module, tuned.config);

    const AdapterFile read = read_adapter_file(file);
    EXPECT_EQ(read.fingerprint, base_fingerprint);
    ASSERT_EQ(read.lora.size(), 2u);
    EXPECT_EQ(read.lora[1].settings, (nn::LoraSettings{.r = 3, .alpha = 3, .dropout = 0.1}));
    ASSERT_EQ(read.bottleneck.size(), 1u);
    EXPECT_EQ(read.bottleneck[0].settings.activation, "gelu");
    EXPECT_EQ(read.tensors.size(), nn::adapter_parameter_names(*tuned.module).size());  // the adapters alone

    test_support::TinyModel base = test_support::tiny_model(architecture, 21);
    base.module->eval();
    const nn::AdapterReport report = load_adapter_file(file, *base.module);
    std::int64_t elements = 0;
    for (const auto& [name, tensor] : read.tensors) elements += tensor.numel();
    EXPECT_EQ(report.parameters, elements);
    EXPECT_TRUE(torch::equal(base.output(), adapted));
    std::filesystem::remove(file);
  }
}

TEST(AdapterFile, IsRefusedOnAnotherBase) {
  test_support::TinyModel tuned = test_support::tiny_model("seq2seq", 31);
  nn::add_lora(*tuned.module, {});
  const auto file = scratch("other-base.safetensors");
  save_adapter_file(file, *tuned.module, tuned.config);

  test_support::TinyModel other = test_support::tiny_model("seq2seq", 32);  // same sizes, other weights
  const std::string message = error_of([&] { load_adapter_file(file, *other.module); });
  EXPECT_EQ(message, file.string() + ": the adapters were trained on another base model (fingerprint " +
                         backbone_fingerprint(*tuned.module) + "), not on this one (" +
                         backbone_fingerprint(*other.module) + ")");
  EXPECT_TRUE(nn::adapter_parameter_names(*other.module).empty());

  test_support::TinyModel adapted = test_support::tiny_model("seq2seq", 31);
  nn::add_bottleneck(*adapted.module, test_support::bottleneck_options(2));
  EXPECT_EQ(error_of([&] { load_adapter_file(file, *adapted.module); }),
            file.string() + ": the model has LoRA or bottleneck adapters already; load an adapter file onto the base "
                            "model alone");
  std::filesystem::remove(file);
}

// PALs are built into the model: the file holds the adapted model's config and the PAL
// tensors, and rebuilds the PALs on the base; a base of other sizes is refused.
TEST(AdapterFile, RebuildsPalsOnTheirBase) {
  const auto with_pal = [](ModelConfig& c) {
    c.pal_size = 8;
    c.pal_heads = 2;
  };
  test_support::TinyModel base = test_support::tiny_model("encoder", 71);
  test_support::TinyModel tuned = test_support::tiny_model("encoder", 71, with_pal);
  auto copy_backbone = [&](torch::nn::Module& into) {
    torch::NoGradGuard no_grad;
    auto params = into.named_parameters();
    for (const auto& p : base.module->named_parameters()) params[p.key()].copy_(p.value());
  };
  copy_backbone(*tuned.module);
  randomise_adapters(*tuned.module);
  const auto file = scratch("pal.safetensors");
  save_adapter_file(file, *tuned.module, tuned.config);
  const AdapterFile read = read_adapter_file(file);
  ASSERT_TRUE(read.model.has_value());
  EXPECT_EQ(read.model->pal_size, 8);
  EXPECT_FALSE(read.prefix.has_value());
  EXPECT_EQ(read.tensors.size(), nn::adapter_parameter_names(*tuned.module).size());
  for (const auto& [name, tensor] : read.tensors) EXPECT_NE(name.find(".pal."), std::string::npos) << name;

  const ModelConfig config = adapted_config(base.config, read, file);
  test_support::TinyModel rebuilt = test_support::tiny_model("encoder", 71, [&](ModelConfig& c) { c = config; });
  copy_backbone(*rebuilt.module);
  load_adapter_file(read, file, *rebuilt.module);
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(torch::equal(rebuilt.output(), tuned.output()));
  EXPECT_FALSE(torch::allclose(base.output(), tuned.output()));  // the PALs change the output

  ModelConfig wider = base.config;
  wider.d_ff = 64;
  EXPECT_NE(error_of([&] { adapted_config(wider, read, file); }).find("d_ff 32, this base has 64"), std::string::npos);
  EXPECT_NE(error_of([&] { adapted_config(tuned.config, read, file); }).find("prefixes or PALs of its own"),
            std::string::npos);
  std::filesystem::remove(file);
}

TEST(AdapterFile, HoldsTheBaseFingerprintAndFormatInItsMetadata) {
  test_support::TinyModel tuned = test_support::tiny_model("causal_lm", 41);
  nn::add_lora(*tuned.module, {.settings = {.r = 1}, .targets = {"lm_head"}});
  const auto file = scratch("metadata.safetensors");
  save_adapter_file(file, *tuned.module, tuned.config);
  const SafetensorsFile raw(file);
  EXPECT_EQ(raw.metadata().at("format"), "strata-adapter/1");
  EXPECT_EQ(raw.metadata().at("base_fingerprint"), backbone_fingerprint(*tuned.module));
  EXPECT_EQ(raw.metadata().at("adapters"),
            R"([{"alpha":16.0,"dropout":0.0,"kind":"lora","modules":["lm_head"],"r":1}])");
  std::vector<std::string> names;
  for (const auto& entry : raw.entries()) names.push_back(entry.name);
  EXPECT_EQ(names, (std::vector<std::string>{"lm_head.lora_A", "lm_head.lora_B"}));
  std::filesystem::remove(file);
}

TEST(AdapterFile, SavingNeedsUnmergedAdapters) {
  test_support::TinyModel model = test_support::tiny_model("encoder", 51);
  const auto file = scratch("refused.safetensors");
  EXPECT_EQ(error_of([&] { save_adapter_file(file, *model.module, model.config); }),
            file.string() + ": the model has no adapters to save");
  nn::add_lora(*model.module, {.targets = {"classifier"}});
  nn::merge_lora(*model.module, nn::LoraMerge::KeepAdapter);
  EXPECT_EQ(error_of([&] { save_adapter_file(file, *model.module, model.config); }),
            file.string() + ": cannot save the LoRA of classifier: it is merged into the weight (unmerge_lora first)");
  EXPECT_FALSE(std::filesystem::exists(file));
}

TEST(BackboneFingerprint, ChangesWithAnyBaseWeight) {
  test_support::TinyModel model = test_support::tiny_model("encoder", 61);
  const std::string before = backbone_fingerprint(*model.module);
  EXPECT_EQ(before.size(), 16u);
  EXPECT_EQ(backbone_fingerprint(*test_support::tiny_model("encoder", 61).module), before);
  torch::NoGradGuard no_grad;
  model.module->named_parameters()["encoder.layers.1.fc1.bias"][0] += 1e-3;
  EXPECT_NE(backbone_fingerprint(*model.module), before);
}

}  // namespace
}  // namespace strata::models
