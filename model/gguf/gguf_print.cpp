#include "model/gguf/gguf_print.h"

#include <algorithm>
#include <iomanip>
#include <limits>
#include <map>

#include "model/gguf/gguf_value.h"

namespace zinc::model {
namespace {

constexpr size_t kArrayPreview = 8;
constexpr size_t kStringPreview = 80;
constexpr size_t kMaxColumn = 48;

std::string shapeText(const GgufTensorInfo& t) {
    std::string s = "[";
    for (uint32_t d = 0; d < t.nDims; ++d) s += (d ? ", " : "") + std::to_string(t.ne[d]);
    return s + "]";
}

std::string valueText(const GgufValue& v, bool all) {
    const size_t maxElems = all ? std::numeric_limits<size_t>::max() : kArrayPreview;
    const size_t maxBytes = all ? std::numeric_limits<size_t>::max() : kStringPreview;
    std::string text = ggufFormatValue(v, maxElems, maxBytes);
    if (const auto* arr = std::get_if<GgufArray>(&v.value)) text = std::to_string(arr->size()) + " " + text;
    return text;
}

void printHeader(const GgufFile& f, std::ostream& out) {
    out << "GGUF v" << f.version() << "  alignment " << f.alignment() << "  tensors " << f.tensors().size()
        << "  kv " << f.metadata().size() << "  data offset " << f.dataOffset() << "  file size "
        << f.fileSize() << "  (" << f.path() << ")\n";
}

void printMetadata(const GgufFile& f, std::ostream& out, bool all) {
    size_t keyWidth = 0;
    for (const auto& [key, v] : f.metadata()) keyWidth = std::max(keyWidth, std::min(key.size(), kMaxColumn));
    out << "\nmetadata (" << f.metadata().size() << "):\n";
    for (const auto& [key, v] : f.metadata()) {
        out << "  " << std::left << std::setw(static_cast<int>(keyWidth)) << key << "  " << std::setw(14)
            << ggufDescribeType(v) << "  " << valueText(v, all) << "\n";
    }
}

void printTensors(const GgufFile& f, std::ostream& out) {
    size_t nameWidth = 4, shapeWidth = 5;
    for (const auto& t : f.tensors()) {
        nameWidth = std::max(nameWidth, std::min(t.name.size(), kMaxColumn));
        shapeWidth = std::max(shapeWidth, shapeText(t).size());
    }
    out << "\ntensors (" << f.tensors().size() << "):\n";
    out << "  " << std::left << std::setw(static_cast<int>(nameWidth)) << "name" << "  " << std::setw(8) << "type"
        << "  " << std::setw(static_cast<int>(shapeWidth)) << "shape" << "  " << std::right << std::setw(12)
        << "offset" << "  " << std::setw(12) << "bytes" << "\n";
    for (const auto& t : f.tensors()) {
        out << "  " << std::left << std::setw(static_cast<int>(nameWidth)) << t.name << "  " << std::setw(8)
            << ggmlTypeName(t.type) << "  " << std::setw(static_cast<int>(shapeWidth)) << shapeText(t) << "  "
            << std::right << std::setw(12) << t.offset << "  " << std::setw(12) << t.nbytes << "\n";
    }
}

void printTypeTotals(const GgufFile& f, std::ostream& out) {
    struct Total {
        uint64_t tensors = 0, bytes = 0, elements = 0;
    };
    std::map<uint32_t, Total> byType;
    Total all;
    for (const auto& t : f.tensors()) {
        auto& tot = byType[static_cast<uint32_t>(t.type)];
        for (auto* x : {&tot, &all}) {
            x->tensors += 1;
            x->bytes += t.nbytes;
            x->elements += t.elements();
        }
    }
    out << "\nbytes per type:\n";
    auto line = [&](std::string_view name, const Total& x) {
        out << "  " << std::left << std::setw(8) << name << std::right << std::setw(6) << x.tensors << " tensors  "
            << std::setw(14) << x.elements << " elements  " << std::setw(14) << x.bytes << " bytes\n";
    };
    for (const auto& [type, tot] : byType) line(ggmlTypeName(static_cast<GgmlType>(type)), tot);
    line("total", all);
}

}  // namespace

void printGguf(const GgufFile& file, std::ostream& out, bool showAllArrayValues) {
    const auto savedFlags = out.flags();
    printHeader(file, out);
    printMetadata(file, out, showAllArrayValues);
    printTensors(file, out);
    printTypeTotals(file, out);
    out.flags(savedFlags);
}

}  // namespace zinc::model
