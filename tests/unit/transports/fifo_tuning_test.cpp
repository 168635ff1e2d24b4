// transports/iface/fifo_tuning.h on a real posix iface configuration (UCT's shared-memory
// transport): the FIFO element size and the receive descriptor pool's growth step are set
// as ufi's defaults say, the geometry fingerprint follows the element size, and a transport
// without a FIFO (self) is left alone. And transports/iface/tcp_tuning.h on a real tcp iface
// configuration: one ready socket per progress call by default, other transports untouched.
#include "transports/iface/fifo_tuning.h"
#include "transports/iface/tcp_tuning.h"
#include "transports/ucx_handles.h"

#include <gtest/gtest.h>
#include <uct/api/uct.h>

#include <cstring>
#include <string>

namespace ufi::transports {
namespace {

uct_component_h component_named(const ComponentList &comps, const std::string &name) {
    for (uct_component_h c : comps.components()) {
        uct_component_attr_t a;
        std::memset(&a, 0, sizeof(a));
        a.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        if (uct_component_query(c, &a) == UCS_OK && name == a.name) return c;
    }
    return nullptr;
}

std::string setting(uct_iface_config_t *config, const char *name) {
    char text[64] = {};
    if (uct_config_get(config, name, text, sizeof text) != UCS_OK) return "?";
    return text;
}

// The iface configuration of transport `tl` on the memory domain `md_name` of `component`.
bool read_config(const char *component, const char *md_name, const char *tl, Md &md, IfaceConfig &out) {
    ComponentList comps;
    if (ComponentList::query(comps) != kOk) return false;
    uct_component_h c = component_named(comps, component);
    if (c == nullptr) return false;
    MdConfig mdc;
    if (MdConfig::read(c, mdc) != kOk || Md::open(c, md_name, mdc, md) != kOk) return false;
    return IfaceConfig::read(md.get(), tl, out) == kOk;
}

TEST(FifoTuning, PosixGetsUfisElementSizeAndDescriptorStep) {
    Md md;
    IfaceConfig config;
    if (!read_config("posix", "posix", "posix", md, config)) GTEST_SKIP() << "no posix transport";
    EXPECT_EQ(setting(config.get(), "MM_RX_BUFS_GROW"), "512") << "UCX's default, before";
    FifoShape shape;
    const auto fingerprint = tune_shm_fifo(config.get(), "posix", &shape);
    ASSERT_EQ(fingerprint.size(), 1u);
    EXPECT_EQ(shape.elem_size, 576u) << "UFI_SHM_FIFO_ELEM_SIZE's default";
    EXPECT_GT(shape.elem_count, 0u);
    tune_shm_rx_pool(config.get(), "posix");
    EXPECT_EQ(setting(config.get(), "MM_RX_BUFS_GROW"), "128") << "UFI_SHM_RX_BUFS_GROW's default";
    EXPECT_EQ(tune_shm_fifo(config.get(), "posix"), fingerprint)
        << "the descriptor step is local: peers' fingerprints do not depend on it";
}

TEST(FifoTuning, ATransportWithoutAFifoIsLeftAlone) {
    Md md;
    IfaceConfig config;
    if (!read_config("self", "self", "self", md, config)) GTEST_SKIP() << "no self transport";
    FifoShape shape{1, 1};
    EXPECT_TRUE(tune_shm_fifo(config.get(), "self", &shape).empty());
    EXPECT_EQ(shape.elem_size, 0u);
    tune_shm_rx_pool(config.get(), "self");  // (nothing to set, nothing logged)
}

TEST(TcpTuning, TcpTakesOneReadySocketPerProgressCall) {
    Md md;
    IfaceConfig config;
    if (!read_config("tcp", "tcp", "tcp", md, config)) GTEST_SKIP() << "no tcp transport";
    const std::string before = setting(config.get(), "MAX_POLL");
    ASSERT_NE(before, "?");
    tune_tcp_events(config.get(), "tcp");
    EXPECT_EQ(setting(config.get(), "MAX_POLL"), "1") << "UFI_TCP_MAX_POLL's default (UCX's: " << before << ")";
}

TEST(TcpTuning, OtherTransportsAreLeftAlone) {
    Md md;
    IfaceConfig config;
    if (!read_config("posix", "posix", "posix", md, config)) GTEST_SKIP() << "no posix transport";
    EXPECT_EQ(setting(config.get(), "MAX_POLL"), "?") << "posix has no such setting";
    tune_tcp_events(config.get(), "posix");  // (nothing to set, nothing logged)
    EXPECT_EQ(setting(config.get(), "MM_FIFO_ELEM_SIZE"), "128") << "untouched: UCX's";
}

}  // namespace
}  // namespace ufi::transports
