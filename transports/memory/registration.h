// One address range registered with every memory domain of a MemoryDomains set that can
// register user memory: the UCT memory handles (memh) zero-copy operations pass, and the
// remote keys a peer needs, packed. RAII: the destructor deregisters (uct_md_mem_dereg), except
// in a fork() child that inherited the registration (transports/fork_safety.h).
// With posix/sysv (allocate-only MDs) nothing is registered for them.
#pragma once

#include "transports/memory/memory_domains.h"
#include "transports/status.h"

#include "transports/ucx_fwd.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ufi::transports {

// The uct_md_mem_reg flags for Registration::create: every access right (ufi enforces what an
// MR allows itself), and with `nonblock` UCT_MD_MEM_FLAG_NONBLOCK (pages are not touched
// now: memory an application has not allocated yet may be registered).
unsigned registration_flags(bool nonblock) noexcept;

class Registration {
  public:
    Registration() = default;
    ~Registration() { reset(); }
    Registration(Registration &&other) noexcept;
    Registration &operator=(Registration &&other) noexcept;
    Registration(const Registration &) = delete;
    Registration &operator=(const Registration &) = delete;

    // Registers [address, address + length) with every registering MD of `mds` (which must
    // outlive the registration), with uct_md_mem_reg `flags` (UCT_MD_MEM_ACCESS_* and
    // UCT_MD_MEM_FLAG_*). All or nothing: on failure nothing stays registered and `failed_md`
    // (if given) names the MD that refused. May throw std::bad_alloc.
    static Status create(const MemoryDomains &mds, void *address, std::size_t length,
                               unsigned flags, Registration &out, std::string *failed_md = nullptr);

    void *address() const { return address_; }
    std::size_t length() const { return length_; }
    bool valid() const { return mds_ != nullptr; }

    // The memh for MD index `md` of the set (nullptr where the MD does not register).
    uct_mem_h memh(std::size_t md) const;

    // The packed remote key for MD index `md` into `out` (resized to the MD's
    // rkey_packed_size; empty for an MD that does not register).
    Status pack_rkey(std::size_t md, std::vector<std::uint8_t> &out) const;

    // Deregisters now.
    void reset() noexcept;

  private:
    const MemoryDomains *mds_ = nullptr;
    void *address_ = nullptr;
    std::size_t length_ = 0;
    unsigned generation_ = 0;      // fork::generation() at create
    std::vector<uct_mem_h> memh_;  // indexed like mds_->all(); nullptr = not registered
};

}  // namespace ufi::transports
