#pragma once
// Reads ../shared/reference/*.golden: `text`, `prompt`, `pos P in T top id:logit ...`,
// `greedy ...` (see ../shared/reference/README.md for the format and the tolerances).
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace zinc::test {

struct GoldenPosition {
    int32_t pos = 0;
    int32_t token = 0;
    std::vector<std::pair<int32_t, float>> top;  // descending
};

struct Golden {
    std::string modelFile;
    std::string text;
    bool hasText = false;
    std::vector<int32_t> prompt;
    std::vector<GoldenPosition> positions;
    std::vector<int32_t> greedy;
};

inline std::vector<int32_t> parseIds(std::istringstream& in) {
    std::vector<int32_t> ids;
    int32_t id;
    while (in >> id) ids.push_back(id);
    return ids;
}

inline Golden readGolden(const std::string& path) {
    std::ifstream f(path);
    if (!f) throw std::runtime_error("cannot open " + path);
    Golden g;
    std::string line;
    while (std::getline(f, line)) {
        if (line.rfind("# model: ", 0) == 0) {
            g.modelFile = line.substr(9, line.find(' ', 9) - 9);
        } else if (line.rfind("text ", 0) == 0) {
            g.text = line.substr(5);
            g.hasText = true;
        } else if (line.rfind("prompt ", 0) == 0) {
            std::istringstream in(line.substr(7));
            g.prompt = parseIds(in);
        } else if (line.rfind("greedy ", 0) == 0) {
            std::istringstream in(line.substr(7));
            g.greedy = parseIds(in);
        } else if (line.rfind("pos ", 0) == 0) {
            std::istringstream in(line);
            GoldenPosition p;
            std::string word;
            in >> word >> p.pos >> word >> p.token >> word;  // pos P in T top
            while (in >> word) {
                const auto colon = word.find(':');
                p.top.emplace_back(std::stoi(word.substr(0, colon)), std::stof(word.substr(colon + 1)));
            }
            g.positions.push_back(std::move(p));
        }
    }
    return g;
}

}  // namespace zinc::test
