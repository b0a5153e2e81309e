// strata import hf, strata export hf: Hugging Face checkpoints in and out of strata runs.
// strata forward, strata generate: a model's outputs on token ids, as transformers gives them.
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "generation_flags.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/recipes/hf_models.h"
#include "strata/recipes/model_outputs.h"

namespace strata::cli {

namespace {

struct TokenIoFlags {
  std::string model, inputs, out, kernel;
};

void add_token_io_flags(CLI::App* sub, TokenIoFlags& flags) {
  sub->add_option("--model", flags.model,
                  "run directory (its best checkpoint), checkpoint directory, or transformers directory (imported on the fly)")
      ->required();
  sub->add_option("--inputs", flags.inputs,
                  "JSON object with input_ids (and attention_mask, decoder_input_ids, token_type_ids, "
                  "global_attention_mask as the model needs), transformers' argument names")
      ->required();
  sub->add_option("--out", flags.out, "write the JSON here (default: standard output)");
  sub->add_option("--kernel", flags.kernel, "attention kernel: fused or reference (default: the model's)");
}

nlohmann::json read_hf_inputs(const std::string& file) {
  const nlohmann::json inputs = nlohmann::json::parse(read_file(file), nullptr, false);
  if (inputs.is_discarded() || !inputs.is_object()) throw Error(file + ": not a JSON object");
  return inputs;
}

void write_output(const std::string& out, const nlohmann::json& json) {
  if (out.empty()) {
    std::printf("%s\n", json.dump().c_str());
  } else {
    write_file_atomic(out, json.dump() + "\n");
  }
}

recipes::LoadedModel load_for_ids(const TokenIoFlags& flags) {
  return recipes::load_model(flags.model, {.require_tokenizer = false, .attention_kernel = flags.kernel});
}

}  // namespace

void register_hf(CLI::App& app) {
  CLI::App* import = app.add_subcommand("import", "Bring a model trained elsewhere into a strata run");
  import->require_subcommand(1);
  CLI::App* import_hf = import->add_subcommand(
      "hf", "A Hugging Face transformers directory (BART, T5, LED, GPT-2, BERT: config.json, model.safetensors, "
            "generation_config.json, tokenizer files) as a strata run every command accepts (docs/pretrained.md)");
  auto import_dir = std::make_shared<std::string>();
  auto import_out = std::make_shared<std::string>();
  auto options = std::make_shared<models::HfImportOptions>();
  import_hf->add_option("DIR", *import_dir, "the transformers directory (save_pretrained's output)")->required();
  import_hf->add_option("--out", *import_out, "the run directory to write")->required();
  import_hf->add_option("--global-tokens", options->global_tokens,
                        "LED: the leading tokens of each input with global attention (strata's global(N))")
      ->check(CLI::PositiveNumber);
  on_run(import_hf, [import_dir, import_out, options] {
    const recipes::HfImportReport report = recipes::import_hf(*import_dir, *import_out, *options);
    for (const std::string& warning : report.warnings) std::fprintf(stderr, "warning: %s\n", warning.c_str());
    std::printf("imported %s (%s): %zu tensors, tokenizer %s -> %s\n", report.model.hf_class.c_str(),
                std::string(models::hf_family_name(report.model.family)).c_str(), report.tensors,
                report.tokenizer.empty() ? "none (the model runs on token ids)" : report.tokenizer.c_str(),
                report.checkpoint.string().c_str());
  });

  CLI::App* export_ = app.add_subcommand("export", "Write a strata model in another toolkit's format");
  export_->require_subcommand(1);
  CLI::App* export_hf = export_->add_subcommand(
      "hf", "A run's model as a Hugging Face transformers directory (config.json, model.safetensors, "
            "generation_config.json, the tokenizer)");
  auto export_run = std::make_shared<std::string>();
  auto export_out = std::make_shared<std::string>();
  export_hf->add_option("RUN", *export_run, "run directory (its best checkpoint) or checkpoint directory")->required();
  export_hf->add_option("--out", *export_out, "the directory to write")->required();
  on_run(export_hf, [export_run, export_out] {
    const models::HfModel model = recipes::export_hf(*export_run, *export_out);
    std::printf("exported %s -> %s\n", model.hf_class.c_str(), export_out->c_str());
  });

  CLI::App* forward = app.add_subcommand(
      "forward", "A model's outputs (logits, encoder states, pooled vector) for given token ids, as JSON in "
                 "transformers' shapes, to compare with a transformers run");
  auto forward_flags = std::make_shared<TokenIoFlags>();
  add_token_io_flags(forward, *forward_flags);
  on_run(forward, [forward_flags] {
    const recipes::LoadedModel model = load_for_ids(*forward_flags);
    write_output(forward_flags->out,
                 recipes::forward_outputs(model, read_hf_inputs(forward_flags->inputs), forward_flags->inputs));
  });

  CLI::App* generate = app.add_subcommand(
      "generate", "Token ids generated from given token ids (seq2seq: input_ids; language models: one prompt per "
                  "row), as JSON {\"sequences\": ...} in transformers' shape");
  auto generate_flags = std::make_shared<TokenIoFlags>();
  add_token_io_flags(generate, *generate_flags);
  const std::shared_ptr<GenerationFlags> decoding = add_generation_flags(generate);
  on_run(generate, [generate_flags, decoding] {
    const recipes::LoadedModel model = load_for_ids(*generate_flags);
    write_output(generate_flags->out, recipes::generate_outputs(model, read_hf_inputs(generate_flags->inputs),
                                                                generation_for(*decoding, model),
                                                                generate_flags->inputs));
  });
}

}  // namespace strata::cli
