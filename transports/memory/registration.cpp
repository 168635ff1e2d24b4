#include "transports/memory/registration.h"

#include "transports/fork_safety.h"
#include "transports/ucs_status.h"

#include <uct/api/uct.h>

#include <utility>

namespace ufi::transports {

Registration::Registration(Registration &&other) noexcept
    : mds_(std::exchange(other.mds_, nullptr)),
      address_(std::exchange(other.address_, nullptr)),
      length_(std::exchange(other.length_, 0)),
      generation_(other.generation_),
      memh_(std::move(other.memh_)) {
    other.memh_.clear();
}

Registration &Registration::operator=(Registration &&other) noexcept {
    if (this != &other) {
        reset();
        mds_ = std::exchange(other.mds_, nullptr);
        address_ = std::exchange(other.address_, nullptr);
        length_ = std::exchange(other.length_, 0);
        generation_ = other.generation_;
        memh_ = std::move(other.memh_);
        other.memh_.clear();
    }
    return *this;
}

Status Registration::create(const MemoryDomains &mds, void *address, std::size_t length,
                                  unsigned flags, Registration &out, std::string *failed_md) {
    Registration r;
    r.mds_ = &mds;
    r.address_ = address;
    r.length_ = length;
    r.generation_ = fork::generation();
    r.memh_.assign(mds.size(), nullptr);
    for (std::size_t i : mds.registering()) {
        uct_mem_h memh = nullptr;
        const ucs_status_t status = uct_md_mem_reg(mds[i].md.get(), address, length, flags, &memh);
        if (status != UCS_OK) {
            if (failed_md != nullptr) *failed_md = mds[i].md_name;
            return status_of(status);  // r's destructor deregisters the ones done so far
        }
        r.memh_[i] = memh;
    }
    out = std::move(r);
    return kOk;
}

unsigned registration_flags(bool nonblock) noexcept {
    unsigned flags = UCT_MD_MEM_ACCESS_ALL;
    if (nonblock) flags |= UCT_MD_MEM_FLAG_NONBLOCK;
    return flags;
}

uct_mem_h Registration::memh(std::size_t md) const {
    return md < memh_.size() ? memh_[md] : nullptr;
}

Status Registration::pack_rkey(std::size_t md, std::vector<std::uint8_t> &out) const {
    out.clear();
    if (mds_ == nullptr || md >= memh_.size() || memh_[md] == nullptr) return kOk;
    const MemoryDomain &d = (*mds_)[md];
    out.resize(d.rkey_packed_size);
    if (d.rkey_packed_size == 0) {
        // UCT still expects a buffer; nothing is written for 0-byte keys (self, tcp, cma).
        std::uint8_t scratch[1];
        return status_of(uct_md_mkey_pack(d.md.get(), memh_[md], scratch));
    }
    return status_of(uct_md_mkey_pack(d.md.get(), memh_[md], out.data()));
}

void Registration::reset() noexcept {
    // A fork() child leaves its parent's registrations alone: deregistering through a shared
    // verbs context would deregister them for the parent.
    if (mds_ != nullptr && !fork::inherited(generation_)) {
        for (std::size_t i = 0; i < memh_.size(); ++i) {
            if (memh_[i] != nullptr) uct_md_mem_dereg((*mds_)[i].md.get(), memh_[i]);
        }
    }
    memh_.clear();
    mds_ = nullptr;
    address_ = nullptr;
    length_ = 0;
}

}  // namespace ufi::transports
