#include "transports/memory/memory_domains.h"

#include "transports/ucs_status.h"

#include <uct/api/uct.h>

namespace ufi::transports {

namespace {

struct Components {
    std::vector<std::pair<std::string, uct_component_h>> by_name;
};

const Components &components() {
    static const Components c = [] {
        Components out;
        ComponentList list;
        if (ComponentList::query(list) != kOk) return out;
        for (uct_component_h comp : list.components()) {
            uct_component_attr_t attr{};
            attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
            if (uct_component_query(comp, &attr) == UCS_OK)
                out.by_name.emplace_back(attr.name, comp);
        }
        // The handles outlive the list (UCT keeps components for the process lifetime).
        return out;
    }();
    return c;
}

}  // namespace

bool MemoryDomain::can_register() const noexcept { return (cap_flags & UCT_MD_FLAG_REG) != 0; }

uct_component_h component_by_name(const std::string &name) {
    for (const auto &[n, comp] : components().by_name) {
        if (n == name) return comp;
    }
    return nullptr;
}

std::size_t MemoryDomains::open(std::span<const MdName> names, std::vector<std::string> *problems) {
    auto problem = [&](std::string text) {
        if (problems != nullptr) problems->push_back(std::move(text));
    };
    std::size_t opened = 0;
    for (const MdName &name : names) {
        if (find(name.md) != SIZE_MAX) continue;
        uct_component_h comp = component_by_name(name.component);
        if (comp == nullptr) {
            problem("md " + name.md + ": UCT has no component " + name.component);
            continue;
        }
        MdConfig config;
        Status status = MdConfig::read(comp, config);
        if (status != UCS_OK) {
            problem("md " + name.md + ": uct_md_config_read: " + to_string(status));
            continue;
        }
        MemoryDomain d;
        status = Md::open(comp, name.md.c_str(), config, d.md);
        if (status != UCS_OK) {
            problem("md " + name.md + ": uct_md_open: " + to_string(status));
            continue;
        }
        uct_md_attr_t attr{};
        status = status_of(uct_md_query(d.md.get(), &attr));
        if (status != UCS_OK) {
            problem("md " + name.md + ": uct_md_query: " + to_string(status));
            continue;
        }
        d.component_name = name.component;
        d.md_name = name.md;
        d.component = comp;
        d.cap_flags = attr.cap.flags;
        d.rkey_packed_size = attr.rkey_packed_size;
        d.reg_mem_types = attr.cap.reg_mem_types;
        if (d.can_register()) registering_.push_back(mds_.size());
        mds_.push_back(std::move(d));
        ++opened;
    }
    return opened;
}

std::size_t MemoryDomains::find(const std::string &md_name) const {
    for (std::size_t i = 0; i < mds_.size(); ++i) {
        if (mds_[i].md_name == md_name) return i;
    }
    return SIZE_MAX;
}

}  // namespace ufi::transports
