#include "sentencepiece_library.h"

#include <dlfcn.h>

#include "strata/core/error.h"

namespace strata::spm {

namespace {

template <typename Function>
Function symbol(void* handle, const char* name) {
  void* address = dlsym(handle, name);
  if (address == nullptr)
    throw Error(std::string("libsentencepiece lacks ") + name + " (version 0.1.9x expected)");
  return reinterpret_cast<Function>(address);
}

// RTLD_DEEPBIND keeps sentencepiece's protobuf apart from libtorch's. AddressSanitizer refuses
// it, and the sanitizer build (tests/CMakeLists.txt) has no libtorch to keep apart from.
#if defined(__SANITIZE_ADDRESS__)  // gcc
#define STRATA_UNDER_ASAN 1
#elif defined(__has_feature)  // clang (make fuzz)
#if __has_feature(address_sanitizer)
#define STRATA_UNDER_ASAN 1
#endif
#endif
#ifdef STRATA_UNDER_ASAN
constexpr int kBindFlags = RTLD_NOW | RTLD_LOCAL;
#else
constexpr int kBindFlags = RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND;
#endif

Library open_library() {
  // The trainer library depends on the processor library: one handle reaches both.
  void* handle = dlopen("libsentencepiece_train.so.0", kBindFlags);
  if (handle == nullptr)
    throw Error(std::string("cannot load sentencepiece (Debian: libsentencepiece0): ") + dlerror());
  // Above FATAL (3): nothing is logged.
  symbol<void (*)(int)>(handle, "_ZN13sentencepiece7logging14SetMinLogLevelEi")(4);
  Library library;
  library.construct_processor =
      symbol<void (*)(void*)>(handle, "_ZN13sentencepiece22SentencePieceProcessorC1Ev");
  library.destroy_status = symbol<void (*)(Status*)>(handle, "_ZN13sentencepiece4util6StatusD1Ev");
  library.status_message = symbol<const char* (*)(const Status*)>(
      handle, "_ZNK13sentencepiece4util6Status13error_messageEv");
  // SentencePieceTrainer::Train(const unordered_map<string, string>&, SentenceIterator*,
  // string*): a Status returned by value arrives through a hidden first pointer.
  library.train = symbol<decltype(Library::train)>(
      handle,
      "_ZN13sentencepiece20SentencePieceTrainer5TrainERKSt13unordered_mapINSt7__cxx1112basic_"
      "stringIcSt11char_traitsIcESaIcEEES7_St4hashIS7_ESt8equal_toIS7_ESaISt4pairIKS7_S7_EEEPNS_"
      "16SentenceIteratorEPS7_");
  return library;
}

}  // namespace

const Library& library() {
  static const Library loaded = open_library();
  return loaded;
}

std::unique_ptr<Processor> new_processor() {
  const Library& loaded = library();  // before allocating: it may throw
  void* memory = ::operator new(sizeof(Processor));
  loaded.construct_processor(memory);
  return std::unique_ptr<Processor>(static_cast<Processor*>(memory));
}

std::optional<std::string> train(const std::unordered_map<std::string, std::string>& args,
                                 std::string* serialized_model) {
  alignas(Status) unsigned char storage[sizeof(Status)];
  Status* status = reinterpret_cast<Status*>(storage);
  library().train(status, args, nullptr, serialized_model);
  std::optional<std::string> message;
  if (!status->ok()) message = library().status_message(status);
  library().destroy_status(status);
  return message;
}

}  // namespace strata::spm
