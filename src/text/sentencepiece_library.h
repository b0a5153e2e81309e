#pragma once
// libsentencepiece, opened at run time rather than linked.
//
// Why: Debian's libsentencepiece carries its own protobuf-lite 3.14 and exports its symbols,
// while libtorch loads libprotobuf 3.21. Linked into one program the two interpose each other
// and the program crashes while it starts. Opened with RTLD_LOCAL | RTLD_DEEPBIND, the library
// binds to its own protobuf and nothing else sees it. So strata makes no link-time reference
// to sentencepiece (the linker's --as-needed then leaves it out): virtual members are called
// through the vtable, the few other entry points are looked up by name, and util::Status
// objects are built in place and destroyed through the library.
//
// sentencepiece's logging stays off: bound this way, its std::cerr is libstdc++'s own object,
// which is never constructed in a program that copy-relocates std::cerr (most do).
#include <sentencepiece_processor.h>

#include <memory>
#include <new>
#include <optional>
#include <string>
#include <unordered_map>

namespace strata::spm {

using Processor = sentencepiece::SentencePieceProcessor;
using Status = sentencepiece::util::Status;

// The entry points strata needs; strata::Error when the library cannot be opened.
struct Library {
  void (*construct_processor)(void* memory);
  void (*destroy_status)(Status* status);
  const char* (*status_message)(const Status* status);
  void (*train)(Status* result, const std::unordered_map<std::string, std::string>& args,
                void* sentence_iterator, std::string* serialized_model);
};
const Library& library();

// A new, empty processor; its destructor is virtual, so deleting it needs no symbol.
std::unique_ptr<Processor> new_processor();

// Runs `call`, which returns a util::Status, and gives its error message (nullopt when OK).
template <typename Call>
std::optional<std::string> error_of(Call&& call) {
  alignas(Status) unsigned char storage[sizeof(Status)];
  Status* status = ::new (storage) Status(call());  // built in place: no copy, no destructor
  std::optional<std::string> message;
  if (!status->ok()) message = library().status_message(status);
  library().destroy_status(status);
  return message;
}

// Trains with sentencepiece's key=value arguments; the model comes back serialized.
std::optional<std::string> train(const std::unordered_map<std::string, std::string>& args,
                                 std::string* serialized_model);

}  // namespace strata::spm
