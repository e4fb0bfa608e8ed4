// Arbitrary bytes as a GGUF file: opened and printed as `zinc-rt gguf` does, its tokenizer built
// and used, then loaded as a model (config, weights bound, tokenizer). The only acceptable
// failure is a ModelError (GgufError is one); anything else escaping is a finding, as is a
// crash, a leak, a hang or a huge allocation.
#include <sstream>

#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_print.h"
#include "model/model.h"
#include "model/tokenizer/tokenizer.h"
#include "tests/fuzz/fuzz_support.h"

using namespace zinc::model;

namespace {

void useTokenizer(const GgufFile& file) {
    if (!file.has("tokenizer.ggml.model")) return;
    try {
        const Tokenizer tokenizer(TokenizerData::fromGguf(file));
        const auto ids = tokenizer.encode("Hello world <|im_start|> \xe2\x96\x81x", true, true);
        (void)tokenizer.decode(ids, false);
    } catch (const ModelError&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static zinc::fuzz::MemoryFile memory("fuzz.gguf");
    const std::string& path = memory.write(data, size);
    try {
        const auto file = GgufFile::open(path);
        std::ostringstream out;
        printGguf(*file, out, size % 2 == 0);
        useTokenizer(*file);
    } catch (const ModelError&) {
        return 0;
    }
    try {
        (void)Model::load(path);
    } catch (const ModelError&) {
    }
    return 0;
}
