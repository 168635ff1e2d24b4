// The transports of one memory domain as UCT lists them (uct_md_query_tl_resources), owned:
// discovery's input, inside transports/ only (its entries are UCT's structs).
#pragma once

#include <uct/api/uct.h>

#include <cstddef>
#include <span>

namespace ufi::transports {

// The list from uct_md_query_tl_resources() (uct_release_tl_resource_list).
class TlResourceList {
  public:
    TlResourceList() noexcept = default;
    ~TlResourceList();
    TlResourceList(TlResourceList &&other) noexcept;
    TlResourceList &operator=(TlResourceList &&other) noexcept;
    TlResourceList(const TlResourceList &) = delete;
    TlResourceList &operator=(const TlResourceList &) = delete;

    static ucs_status_t query(uct_md_h md, TlResourceList &out);

    std::span<const uct_tl_resource_desc_t> resources() const noexcept { return {list_, count_}; }
    std::size_t size() const noexcept { return count_; }

  private:
    void reset() noexcept;
    uct_tl_resource_desc_t *list_ = nullptr;
    unsigned count_ = 0;
};

}  // namespace ufi::transports
