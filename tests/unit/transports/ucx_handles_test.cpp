// The RAII wrappers: they own, move, and release UCX handles; factories report
// UCS status; opening the self transport end to end exercises every wrapper.
#include "transports/ucx_handles.h"
#include "transports/tl_resource_list.h"
#include "transports/ucs_status.h"

#include <uct/api/uct.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <type_traits>

namespace ufi::transports {
namespace {

static_assert(!std::is_copy_constructible_v<Md>);
static_assert(!std::is_copy_assignable_v<Iface>);
static_assert(std::is_nothrow_move_constructible_v<Worker>);
static_assert(std::is_nothrow_move_assignable_v<ComponentList>);
static_assert(!std::is_copy_constructible_v<TlResourceList>);

ucs_status_t no_error(void *, uct_ep_h, ucs_status_t) {
    return UCS_OK;
}

TEST(UcxHandles, StatusToString) {
    EXPECT_EQ(to_string(UCS_OK), "Success");
    EXPECT_EQ(to_string(UCS_ERR_NO_RESOURCE),
              "No resources are available to initiate the operation");
    EXPECT_FALSE(to_string(UCS_ERR_IO_ERROR).empty());
}

TEST(UcxHandles, DefaultIsEmpty) {
    Md md;
    Worker w;
    Iface i;
    EXPECT_FALSE(md);
    EXPECT_FALSE(w);
    EXPECT_FALSE(i);
    EXPECT_EQ(i.get(), nullptr);
    ComponentList list;
    EXPECT_EQ(list.size(), 0U);
}

TEST(UcxHandles, OpenSelfIfaceAndMove) {
    ComponentList comps;
    ASSERT_EQ(ComponentList::query(comps), UCS_OK);
    uct_component_h self_comp = nullptr;
    for (uct_component_h c : comps.components()) {
        uct_component_attr_t a;
        std::memset(&a, 0, sizeof(a));
        a.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        ASSERT_EQ(uct_component_query(c, &a), UCS_OK);
        if (std::string(a.name) == "self") {
            self_comp = c;
        }
    }
    if (self_comp == nullptr) {
        GTEST_SKIP() << "no self component";
    }
    ComponentList moved_list = std::move(comps);
    EXPECT_EQ(comps.size(), 0U);
    EXPECT_GT(moved_list.size(), 0U);

    AsyncContext async;
    ASSERT_EQ(AsyncContext::create(AsyncMode::kPoll, async), UCS_OK);
    Worker worker;
    ASSERT_EQ(Worker::create(async, ThreadMode::kSingle, worker), UCS_OK);
    MdConfig mdc;
    ASSERT_EQ(MdConfig::read(self_comp, mdc), UCS_OK);
    Md md;
    ASSERT_EQ(Md::open(self_comp, "self", mdc, md), UCS_OK);
    EXPECT_TRUE(md);

    TlResourceList tls;
    ASSERT_EQ(TlResourceList::query(md.get(), tls), UCS_OK);
    ASSERT_GE(tls.size(), 1U);
    const uct_tl_resource_desc_t &tl = tls.resources()[0];

    IfaceConfig ifc;
    ASSERT_EQ(IfaceConfig::read(md.get(), tl.tl_name, ifc), UCS_OK);
    uct_iface_params_t params;
    std::memset(&params, 0, sizeof(params));
    params.field_mask = UCT_IFACE_PARAM_FIELD_OPEN_MODE | UCT_IFACE_PARAM_FIELD_DEVICE |
                        UCT_IFACE_PARAM_FIELD_ERR_HANDLER | UCT_IFACE_PARAM_FIELD_ERR_HANDLER_ARG |
                        UCT_IFACE_PARAM_FIELD_ERR_HANDLER_FLAGS;
    params.open_mode = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name = tl.tl_name;
    params.mode.device.dev_name = tl.dev_name;
    params.err_handler = no_error;
    Iface iface;
    ASSERT_EQ(Iface::open(md, worker, params, ifc, iface), UCS_OK);
    uct_iface_h raw = iface.get();
    Iface other = std::move(iface);
    EXPECT_FALSE(iface);
    EXPECT_EQ(other.get(), raw);
    other.reset();
    EXPECT_FALSE(other);

    // A bad transport name is an error status, not a crash, and leaves the output empty.
    params.mode.device.tl_name = "no-such-transport";
    Iface bad;
    EXPECT_NE(Iface::open(md, worker, params, ifc, bad), UCS_OK);
    EXPECT_FALSE(bad);
    // Destruction order: ifaces, md, worker, async (reverse of declaration).
}

}  // namespace
}  // namespace ufi::transports
