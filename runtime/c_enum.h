// C programs may store any int in an enum field (C enums are ints); C++ may not load an
// out-of-range value through the enum type (UBSan's -fsanitize=enum reports it). Values that
// come from applications are therefore read as int first.
#pragma once

#include <cstring>
#include <type_traits>

namespace ufi::runtime {

template <typename E>
int raw_enum(const E &value) noexcept {
    static_assert(std::is_enum_v<E> && sizeof(E) == sizeof(int), "a C enum");
    int v;
    std::memcpy(&v, &value, sizeof v);
    return v;
}

template <typename E>
void set_raw_enum(E &field, int value) noexcept {
    static_assert(std::is_enum_v<E> && sizeof(E) == sizeof(int), "a C enum");
    std::memcpy(&field, &value, sizeof value);
}

}  // namespace ufi::runtime
