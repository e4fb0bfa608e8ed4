#pragma once
// The model cache: GGUF files pulled with `zinc-rt pull`, kept as DIR/OWNER/REPO/FILE under
// $ZINC_MODELS, else $XDG_CACHE_HOME/zinc-rt/models, else ~/.cache/zinc-rt/models. A cached
// model's name is "OWNER/REPO:FILE"; "OWNER/REPO" and FILE (with or without .gguf) name it too
// while only one cached model matches. A download in progress is FILE.partial and no model yet.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace zinc::tools::models {

struct CachedModel {
    std::string name;  // OWNER/REPO:FILE
    std::filesystem::path path;
    uint64_t bytes = 0;
};

std::filesystem::path cacheDir();
// Every complete model in the cache, sorted by name.
std::vector<CachedModel> listCached();
// The path of a model given as a file path or a cached model's name; a file that exists wins.
// Throws std::runtime_error naming the reference, or the names it could mean when ambiguous.
std::filesystem::path resolveModel(const std::string& ref);
// The cached model `ref` names; throws as resolveModel does (a path outside the cache is an error).
CachedModel findCached(const std::string& ref);

}  // namespace zinc::tools::models
