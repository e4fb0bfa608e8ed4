#pragma once
// A named bit range of a PM4 packet dword or of a register: the one description that the
// builder encodes with and the decoder prints with (STYLE.md §3). Tables of Fields live in
// packets.h and registers.h, each citing its public source.
#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>

namespace zinc::pm4 {

// The graphics IP generation a stream is written for. Both are RDNA compute queues (MEC).
enum class Gfx : uint8_t { Gfx11 = 11, Gfx12 = 12 };

constexpr std::string_view gfxName(Gfx gfx) { return gfx == Gfx::Gfx11 ? "gfx11" : "gfx12"; }

// One named value of an enumerated field (e.g. DATA_SEL 3 = "GPU_CLOCK").
struct ValueName {
    uint32_t value;
    std::string_view name;
};

struct Field {
    std::string_view name;
    uint8_t dword = 0;  // dword of the packet, header = 0 (always 0 for register fields)
    uint8_t shift = 0;
    uint8_t width = 32;
    const ValueName* valueNames = nullptr;
    uint16_t valueNameCount = 0;
    bool valuesComplete = true;  // false: valueNames lists some values only (no "undefined" for others)
    const Field* subfields = nullptr;  // a field that holds a register-like value (GCR_CNTL, initiator)
    uint16_t subfieldCount = 0;

    constexpr Field() = default;
    // Written as the documents write it: name, dword, [hi:lo].
    constexpr Field(std::string_view n, unsigned dw, unsigned hi, unsigned lo)
        : name(n), dword(static_cast<uint8_t>(dw)), shift(static_cast<uint8_t>(lo)),
          width(static_cast<uint8_t>(hi - lo + 1)) {}

    template <size_t N>
    constexpr Field withValues(const ValueName (&values)[N]) const {
        Field f = *this;
        f.valueNames = values;
        f.valueNameCount = static_cast<uint16_t>(N);
        return f;
    }
    // Names for some values of a larger set (e.g. VGT_EVENT_TYPE); other values are not errors.
    template <size_t N>
    constexpr Field withSomeValues(const ValueName (&values)[N]) const {
        Field f = withValues(values);
        f.valuesComplete = false;
        return f;
    }
    template <size_t N>
    constexpr Field withSubfields(const Field (&fields)[N]) const {
        Field f = *this;
        f.subfields = fields;
        f.subfieldCount = static_cast<uint16_t>(N);
        return f;
    }

    constexpr Field withSubfields(std::span<const Field> fields) const {  // a derived table (overlay())
        Field f = *this;
        f.subfields = fields.data();
        f.subfieldCount = static_cast<uint16_t>(fields.size());
        return f;
    }

    constexpr uint32_t maxValue() const { return width >= 32 ? 0xFFFFFFFFu : (1u << width) - 1; }
    constexpr uint32_t mask() const { return maxValue() << shift; }
    constexpr bool fits(uint64_t value) const { return value <= maxValue(); }

    // Encode: the value placed in its bits. A value that does not fit is a builder bug.
    constexpr uint32_t operator()(uint32_t value) const {
        assert(fits(value) && "pm4: value does not fit its field");
        return (value << shift) & mask();
    }
    // Decode: the field's value out of a dword.
    constexpr uint32_t get(uint32_t dword) const { return (dword & mask()) >> shift; }
    // The dword with this field replaced (patching).
    constexpr uint32_t set(uint32_t dword, uint32_t value) const { return (dword & ~mask()) | (*this)(value); }

    constexpr std::span<const ValueName> values() const { return {valueNames, valueNameCount}; }
    constexpr std::span<const Field> subs() const { return {subfields, subfieldCount}; }
    // The name of a value, or "" when the field has no name for it.
    constexpr std::string_view nameOf(uint32_t value) const {
        for (const ValueName& v : values())
            if (v.value == value) return v.name;
        return {};
    }
};

// Looks a field up by name at compile time; a misspelt name does not compile.
consteval Field fieldNamed(std::span<const Field> fields, std::string_view name) {
    for (const Field& f : fields)
        if (f.name == name) return f;
    throw "pm4: no field of that name";  // reached only in constant evaluation: a compile error
}

// The bits of a dword that no field in `fields` (on that dword) covers.
constexpr uint32_t coveredBits(std::span<const Field> fields, unsigned dword) {
    uint32_t covered = 0;
    for (const Field& f : fields)
        if (f.dword == dword) covered |= f.mask();
    return covered;
}

// A table written as another generation's plus its differences (overlay(), registers.h
// overlayRegisters()): up to Max entries, `count` of them used.
template <class T, size_t Max>
struct DerivedTable {
    std::array<T, Max> items{};
    size_t count = 0;
    constexpr const T* begin() const { return items.data(); }
    constexpr const T* end() const { return items.data() + count; }
    constexpr size_t size() const { return count; }
    constexpr operator std::span<const T>() const { return {items.data(), count}; }
};

// Orders a derived table by dword, then bit (insertion sort: a handful of fields).
template <size_t Max>
constexpr void sortByBit(DerivedTable<Field, Max>& t) {
    for (size_t i = 1; i < t.count; ++i)
        for (size_t j = i; j > 0 && (t.items[j].dword < t.items[j - 1].dword ||
                                     (t.items[j].dword == t.items[j - 1].dword && t.items[j].shift < t.items[j - 1].shift));
             --j) {
            const Field tmp = t.items[j];
            t.items[j] = t.items[j - 1];
            t.items[j - 1] = tmp;
        }
}

// Fields of a later generation's packet: `base` (the earlier one's) less the fields named in
// `dropped` and less every field that shares a bit of its dword with one of `changes`, plus
// `changes`; ordered by dword, then bit.
template <size_t B, size_t C>
constexpr DerivedTable<Field, B + C> overlay(const Field (&base)[B], const Field (&changes)[C],
                                              std::initializer_list<std::string_view> dropped = {}) {
    DerivedTable<Field, B + C> t;
    for (const Field& f : base) {
        bool keep = true;
        for (const Field& c : changes) keep = keep && !(c.dword == f.dword && (c.mask() & f.mask()) != 0);
        for (std::string_view name : dropped) keep = keep && name != f.name;
        if (keep) t.items[t.count++] = f;
    }
    for (const Field& c : changes) t.items[t.count++] = c;
    sortByBit(t);
    return t;
}
// `base` less the fields named in `dropped` (bits a later generation reserves).
template <size_t B>
constexpr DerivedTable<Field, B> without(const Field (&base)[B], std::initializer_list<std::string_view> dropped) {
    DerivedTable<Field, B> t;
    for (const Field& f : base) {
        bool keep = true;
        for (std::string_view name : dropped) keep = keep && name != f.name;
        if (keep) t.items[t.count++] = f;
    }
    return t;
}


}  // namespace zinc::pm4
