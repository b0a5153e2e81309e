// libtorch and sentencepiece in one process. Debian's libsentencepiece bundles protobuf 3.14
// and libtorch loads protobuf 3.21; linked together they crash at start-up. strata opens
// sentencepiece at run time in isolation (src/text/sentencepiece_library.h). This binary links
// libtorch, so it fails (crashes) if that isolation ever breaks.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <filesystem>

#include "strata/attn/token_layout.h"
#include "strata/doc/document.h"
#include "strata/text/sentencepiece_tokenizer.h"
#include "text/text_test_util.h"

namespace strata {
namespace {

TEST(SentencePieceWithTorch, TrainEncodeAndLayoutInATorchProcess) {
  const auto dir = std::filesystem::temp_directory_path() / ("strata_spm_torch_" + std::to_string(::getpid()));
  const std::vector<std::string> sentences = test::generated_sentences(2000);
  SentencePieceOptions options;
  options.vocab_size = 300;
  const auto tokenizer = SentencePieceTokenizer::train(sentences, options, dir);
  const auto reloaded = load_tokenizer(dir / "tokenizer.model");
  EXPECT_EQ(reloaded->encode("the long document"), tokenizer->encode("the long document"));

  DocumentBuilder builder("doc");
  builder.open_section("Intro", 1);
  builder.add_paragraph("The long document. It has sections.");
  const Layout layout = make_layout(builder.finish(), *tokenizer);
  const attn::TokenLayout t = attn::batch_layouts({&layout});
  EXPECT_EQ(t.token.numel(), static_cast<std::int64_t>(layout.size()));
  EXPECT_GT(t.token.numel(), 4);
  EXPECT_EQ(t.sentence.max().item<std::int32_t>(), 1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace strata
