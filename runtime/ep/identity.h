// An endpoint's identity in its address (transports/address.h): a random 64-bit uuid drawn
// at each enable, and an endpoint id that is unique among the live endpoints of the process
// (a counter). fi_setname can hand an endpoint the identity of an earlier one (a restarted
// process keeping its name); the registry keeps ids unique either way.
#pragma once

#include <cstdint>

namespace ufi::runtime::ep {

// 64 random bits from getrandom(2) (never 0). Falls back to a time- and address-seeded mix
// if the kernel call fails.
uint64_t random_uuid() noexcept;

// Process-wide registry of the endpoint ids in use. Thread-safe.
namespace ids {
// The next free id (ids start at 1 and wrap, skipping ids in use and 0).
uint32_t acquire() noexcept;
// Takes a specific id (fi_setname); false when a live endpoint holds it.
bool claim(uint32_t id) noexcept;
void release(uint32_t id) noexcept;
bool in_use(uint32_t id) noexcept;
// The uuid the endpoint holding `id` goes by (set at fi_enable; an endpoint named by
// fi_setname takes its name's).
void set_uuid(uint32_t id, uint64_t uuid) noexcept;
// Whether the endpoint named (`id`, `uuid`) is one of this process's, open now: a peer that
// cannot progress while this process's thread waits on it in a close.
bool lives_here(uint32_t id, uint64_t uuid) noexcept;
}  // namespace ids

}  // namespace ufi::runtime::ep
