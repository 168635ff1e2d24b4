// The UCT memory domains of one ufi domain, each opened once (uct_md_open) and queried:
// registration (uct_md_mem_reg), rkey packing and the endpoints' interfaces all need the
// open MD handle, and UCT wants one open per (component, md name) and user.
#pragma once

#include "transports/ucx_handles.h"

#include "transports/ucx_fwd.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ufi::transports {

// One (component, memory domain) pair to open, as discovery names them (Resource::component,
// Resource::md).
struct MdName {
    std::string component;
    std::string md;
    bool operator==(const MdName &) const = default;
};

// An open memory domain.
struct MemoryDomain {
    std::string component_name;  // "tcp", "cma", "self", ...
    std::string md_name;
    uct_component_h component = nullptr;
    Md md;
    std::uint64_t cap_flags = 0;       // UCT_MD_FLAG_*
    std::size_t rkey_packed_size = 0;  // bytes uct_md_mkey_pack writes
    std::uint64_t reg_mem_types = 0;   // UCS_BIT(ucs_memory_type_t)

    // UCT_MD_FLAG_REG: the MD registers user memory (self, tcp, cma; not posix/sysv,
    // which only allocate).
    bool can_register() const noexcept;
};

// The component handle UCT knows by `name`, or nullptr. Component handles stay valid for the
// life of the process (queried once, thread-safe).
uct_component_h component_by_name(const std::string &name);

class MemoryDomains {
  public:
    MemoryDomains() = default;
    MemoryDomains(MemoryDomains &&) noexcept = default;
    MemoryDomains &operator=(MemoryDomains &&) noexcept = default;

    // Opens each distinct name once, in the order given. A name whose component is unknown or
    // whose MD fails to open or query is left out, and `problems` (if given) says why; the
    // rest still open. Returns the number opened. May throw std::bad_alloc.
    std::size_t open(std::span<const MdName> names, std::vector<std::string> *problems = nullptr);

    std::span<const MemoryDomain> all() const { return mds_; }
    std::size_t size() const { return mds_.size(); }
    const MemoryDomain &operator[](std::size_t i) const { return mds_[i]; }
    // Indexes (into all()) of the MDs that register user memory, in order.
    std::span<const std::size_t> registering() const { return registering_; }
    // The index of the MD called `md_name`, or SIZE_MAX.
    std::size_t find(const std::string &md_name) const;

  private:
    std::vector<MemoryDomain> mds_;
    std::vector<std::size_t> registering_;
};

}  // namespace ufi::transports
