#include "tools/models/pull.h"

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <stdexcept>

#include "model/gguf/gguf_file.h"
#include "tools/models/model_cache.h"
#include "tools/models/pull_progress.h"

namespace zinc::tools::models {
namespace fs = std::filesystem;
namespace {

constexpr int kMaxRedirects = 5;

struct Url {
    std::string origin;  // scheme://host[:port]
    std::string path;    // from the first '/' on
};

Url splitUrl(const std::string& url) {
    const size_t scheme = url.find("://");
    const size_t slash = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
    if (scheme == std::string::npos) throw std::runtime_error(fmt::format("pull: '{}' is not an http(s) URL", url));
    if (slash == std::string::npos) return {url, "/"};
    return {url.substr(0, slash), url.substr(slash)};
}

httplib::Client client(const std::string& origin) {
    httplib::Client c(origin);
    c.set_connection_timeout(30);
    c.set_read_timeout(60);
    return c;
}

// "OWNER/REPO" and the FILE, if given.
std::pair<std::string, std::string> splitRef(const std::string& ref) {
    const size_t colon = ref.find(':');
    std::string repo = ref.substr(0, colon), file = colon == std::string::npos ? "" : ref.substr(colon + 1);
    const size_t slash = repo.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == repo.size() || repo.find('/', slash + 1) != std::string::npos)
        throw std::runtime_error(fmt::format("pull: '{}' is not OWNER/REPO[:FILE]", ref));
    return {repo, file};
}

// The .gguf to fetch when none is named: the only one, else the Q4_K_M one.
std::string chooseFile(const std::string& endpoint, const std::string& repo) {
    const Url api = splitUrl(endpoint + "/api/models/" + repo);
    auto res = client(api.origin).Get(api.path);
    if (!res) throw std::runtime_error(fmt::format("pull: {}{}: {}", api.origin, api.path, httplib::to_string(res.error())));
    if (res->status == 404) throw std::runtime_error(fmt::format("pull: no repository {} at {} (HTTP 404)", repo, endpoint));
    if (res->status != 200) throw std::runtime_error(fmt::format("pull: {}{}: HTTP {}", api.origin, api.path, res->status));
    std::vector<std::string> ggufs;
    try {
        const nlohmann::json listing = nlohmann::json::parse(res->body);
        for (const auto& s : listing.at("siblings")) {
            const std::string name = s.at("rfilename").get<std::string>();
            if (name.ends_with(".gguf")) ggufs.push_back(name);
        }
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(fmt::format("pull: {}{}: not a file list ({})", api.origin, api.path, e.what()));
    }
    if (ggufs.size() == 1) return ggufs[0];
    for (const std::string& name : ggufs) {
        std::string upper = name;
        std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
        if (upper.find("Q4_K_M") != std::string::npos) return name;
    }
    if (ggufs.empty()) throw std::runtime_error(fmt::format("pull: {} has no .gguf file", repo));
    throw std::runtime_error(fmt::format("pull: {} has {} .gguf files and none is Q4_K_M; name one: {}", repo, ggufs.size(),
                                         fmt::join(ggufs, ", ")));
}

// The sha256 an ETag stands for (the Hub's LFS ETags are the file's sha256), if it is one.
std::optional<std::string> shaOfEtag(std::string etag) {
    if (etag.rfind("W/", 0) == 0) etag.erase(0, 2);
    etag.erase(std::remove(etag.begin(), etag.end(), '"'), etag.end());
    if (etag.size() != 64 || etag.find_first_not_of("0123456789abcdef") != std::string::npos) return std::nullopt;
    return etag;
}

std::string sha256Of(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
    std::vector<char> buf(1 << 20);
    while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0)
        EVP_DigestUpdate(ctx, buf.data(), static_cast<size_t>(in.gcount()));
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_DigestFinal_ex(ctx, digest, &n);
    EVP_MD_CTX_free(ctx);
    std::string hex;
    for (unsigned int i = 0; i < n; ++i) hex += fmt::format("{:02x}", digest[i]);
    return hex;
}

// One download attempt into `partial`, resuming from its size. Returns true when the whole file
// is there; false for a connection that stopped early (try again); throws for the rest.
struct Transfer {
    std::optional<std::string> sha256;  // from X-Linked-Etag / ETag
    uint64_t total = 0;                 // whole file size, once known
};

bool fetchOnce(const std::string& url, const fs::path& partial, Transfer& t, PullProgress& progress) {
    std::error_code ec;
    const uint64_t have = fs::is_regular_file(partial, ec) ? fs::file_size(partial, ec) : 0;
    Url at = splitUrl(url);
    for (int hop = 0; hop <= kMaxRedirects; ++hop) {
        httplib::Headers headers;
        if (have > 0) headers.emplace("Range", fmt::format("bytes={}-", have));
        int status = 0;
        std::string location;
        bool append = false;
        FILE* out = nullptr;
        std::string writeError;
        auto res = client(at.origin).Get(
            at.path, headers,
            [&](const httplib::Response& r) {
                status = r.status;
                location = r.get_header_value("Location");
                for (const char* key : {"X-Linked-Etag", "ETag"})
                    if (!t.sha256 && r.has_header(key)) t.sha256 = shaOfEtag(r.get_header_value(key));
                if (status == 200) t.total = r.get_header_value<uint64_t>("Content-Length");
                if (status == 206) {
                    const std::string range = r.get_header_value("Content-Range");  // bytes A-B/TOTAL
                    t.total = std::stoull(range.substr(range.find('/') + 1));
                    append = true;
                }
                if (status != 200 && status != 206) return false;
                out = std::fopen(partial.c_str(), append ? "ab" : "wb");
                if (!out) writeError = fmt::format("cannot write {}: {}", partial.string(), std::strerror(errno));
                progress.start(append ? have : 0, t.total);
                return out != nullptr;
            },
            [&](const char* data, size_t n) {
                if (std::fwrite(data, 1, n, out) != n || std::fflush(out) != 0) {
                    writeError = errno == ENOSPC ? fmt::format("no space left on the device of {} ({} MiB to go)", partial.parent_path().string(),
                                                               (t.total - progress.done()) >> 20)
                                                 : fmt::format("cannot write {}: {}", partial.string(), std::strerror(errno));
                    return false;
                }
                progress.advance(n);
                return true;
            });
        if (out) std::fclose(out);
        if (!writeError.empty()) throw std::runtime_error("pull: " + writeError);
        if (status >= 300 && status < 400 && !location.empty()) {
            at = location.rfind("http", 0) == 0 ? splitUrl(location) : Url{at.origin, location};
            continue;
        }
        if (status == 416 && have > 0) return true;  // the partial file is already whole
        if (status == 404) throw std::runtime_error(fmt::format("pull: not found: {} (HTTP 404)", url));
        if (status != 200 && status != 206) {
            if (status == 0) {
                progress.note(fmt::format("connection failed: {}", httplib::to_string(res.error())));
                return false;
            }
            throw std::runtime_error(fmt::format("pull: {}: HTTP {}", url, status));
        }
        const uint64_t now = fs::is_regular_file(partial, ec) ? fs::file_size(partial, ec) : 0;
        if (now >= t.total && res) return true;
        progress.note(fmt::format("connection stopped at {} of {} bytes", now, t.total));
        return false;
    }
    throw std::runtime_error(fmt::format("pull: {}: more than {} redirects", url, kMaxRedirects));
}

}  // namespace

fs::path pull(const std::string& ref, const PullOptions& options) {
    auto [repo, file] = splitRef(ref);
    std::string endpoint = options.endpoint;
    while (endpoint.ends_with("/")) endpoint.pop_back();
    if (file.empty()) file = chooseFile(endpoint, repo);
    const fs::path dir = cacheDir() / repo;
    const fs::path target = dir / fs::path(file).filename();
    const fs::path partial = target.string() + ".partial";
    fs::create_directories(dir);
    const std::string name = fmt::format("{}:{}", repo, target.filename().string());
    const std::string url = fmt::format("{}/{}/resolve/main/{}", endpoint, repo, file);
    PullProgress progress(name);
    Transfer t;
    bool whole = false;
    for (int attempt = 1; attempt <= options.attempts && !whole; ++attempt) whole = fetchOnce(url, partial, t, progress);
    progress.finish();
    if (!whole)
        throw std::runtime_error(fmt::format("pull: {}: the connection kept failing ({} tries); {} is kept, pull again to resume",
                                             url, options.attempts, partial.string()));
    if (t.sha256) {
        const std::string got = sha256Of(partial);
        if (got != *t.sha256) {
            fs::remove(partial);
            throw std::runtime_error(fmt::format("pull: {}: sha256 {} but the server's ETag says {}; the download was removed", name, got,
                                                 *t.sha256));
        }
    }
    try {
        model::GgufFile::open(partial.string());
    } catch (const model::GgufError& e) {
        fs::remove(partial);
        throw std::runtime_error(fmt::format("pull: {}: not a whole GGUF file, the download was removed: {}", name, e.what()));
    }
    fs::rename(partial, target);
    fmt::print(stderr, "pulled {} ({:.1f} MiB, sha256 {}) into {}\n", name, static_cast<double>(fs::file_size(target)) / (1 << 20),
               t.sha256 ? "checked" : "not sent by the server", target.string());
    return target;
}

}  // namespace zinc::tools::models
